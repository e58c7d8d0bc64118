import { ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthCookies } from '../auth/cookies.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { clientAddress } from '../core/http.js';
import { sendStoredBytes } from '../core/transfer.js';
import { ImageForms } from '../images/forms.js';
import { AccountsService } from './service.js';

/** The caller's own account (name, avatar, password, deletion: with a session only) and the avatars under /uploads/avatars. */
@injectable()
export class AccountsRoutes implements Feature {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(AccountsService) private readonly accounts: AccountsService,
    @inject(ImageForms) private readonly imageForms: ImageForms,
    @inject(AuthCookies) private readonly authCookies: AuthCookies,
  ) {}

  register(routes: Routes): void {
    routes.on(ROUTES.updateMe, async ({ principal, body }) => this.accounts.rename(principal, (await body()).name));

    routes.on(ROUTES.setAvatar, async ({ req, res, principal }) => {
      const image = await this.imageForms.readImage(principal, req, res);
      return this.accounts.setAvatar(principal, image);
    });

    routes.on(ROUTES.removeAvatar, async ({ principal }) => this.accounts.setAvatar(principal, null));

    routes.on(ROUTES.changePassword, async ({ req, principal, body }) => {
      return this.accounts.changePassword(principal, await body(), clientAddress(req, this.config.trustProxy));
    });

    routes.on(ROUTES.deleteAccount, async ({ req, res, principal, body }) => {
      await this.accounts.deleteAccount(principal, await body(), clientAddress(req, this.config.trustProxy));
      this.authCookies.clear(res);
      return { id: principal.userId, deleted: true };
    });

    // Also answers HEAD: tinyhttp runs a path's GET route for it.
    routes.on(ROUTES.mediaAvatar, async ({ req, res, params }) => {
      await sendStoredBytes(req, res, await this.accounts.avatar(params.name), 'inline');
    });
  }
}
