import { changePasswordRequest, deleteAccountRequest, updateMeRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthCookies } from '../auth/cookies.js';
import { AuthGuard } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { clientAddress, jsonBody, sendJson } from '../core/http.js';
import { sendStoredBytes } from '../core/transfer.js';
import { ImageForms } from '../images/forms.js';
import { AccountsService } from './service.js';

/** The caller's own account (name, avatar, password, deletion) and the avatars under /uploads/avatars. */
@injectable()
export class AccountsRoutes implements Feature {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(AccountsService) private readonly accounts: AccountsService,
    @inject(ImageForms) private readonly imageForms: ImageForms,
    @inject(AuthCookies) private readonly authCookies: AuthCookies,
  ) {}

  register({ app }: Routes): void {
    app.put('/api/auth/me', async (req, res) => {
      const principal = await this.guard.authenticate(req, { sessionOnly: true });
      const { name } = await jsonBody(req, res, updateMeRequest);
      sendJson(res, 200, await this.accounts.rename(principal, name));
    });

    app.put('/api/auth/me/avatar', async (req, res) => {
      const principal = await this.guard.authenticate(req, { sessionOnly: true });
      const image = await this.imageForms.readImage(principal, req, res);
      sendJson(res, 200, await this.accounts.setAvatar(principal, image));
    });

    app.delete('/api/auth/me/avatar', async (req, res) => {
      const principal = await this.guard.authenticate(req, { sessionOnly: true });
      sendJson(res, 200, await this.accounts.setAvatar(principal, null));
    });

    app.post('/api/auth/password', async (req, res) => {
      const principal = await this.guard.authenticate(req, { passwordChange: true, sessionOnly: true });
      const input = await jsonBody(req, res, changePasswordRequest);
      sendJson(res, 200, await this.accounts.changePassword(principal, input, clientAddress(req, this.config.trustProxy)));
    });

    app.delete('/api/auth/me', async (req, res) => {
      const principal = await this.guard.authenticate(req, { sessionOnly: true });
      const input = await jsonBody(req, res, deleteAccountRequest);
      await this.accounts.deleteAccount(principal, input, clientAddress(req, this.config.trustProxy));
      this.authCookies.clear(res);
      sendJson(res, 200, { id: principal.userId, deleted: true });
    });

    // Also answers HEAD: tinyhttp runs a path's GET route for it.
    app.get('/uploads/avatars/:name', async (req, res) => {
      await this.guard.authenticate(req, { allowCookie: true });
      await sendStoredBytes(req, res, await this.accounts.avatar(req.params.name ?? ''), 'inline');
    });
  }
}
