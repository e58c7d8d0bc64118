import type { App } from '@tinyhttp/app';
import { createTokenRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard } from '../core/auth-guard.js';
import type { Feature } from '../core/feature.js';
import { idParam, jsonBody, sendCreated, sendJson } from '../core/http.js';
import { TokensService } from './service.js';

/** Personal access tokens: create, list, revoke (with a session only). */
@injectable()
export class TokensRoutes implements Feature {
  constructor(
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(TokensService) private readonly tokens: TokensService,
  ) {}

  async start(): Promise<void> {
    await this.tokens.start();
  }

  async stop(): Promise<void> {
    await this.tokens.stop();
  }

  /** GET before POST: a HEAD is answered only where a path's first route is a GET. */
  register(app: App): void {
    app.get('/api/tokens', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.tokens.list(principal));
    });

    app.post('/api/tokens', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const input = await jsonBody(req, res, createTokenRequest);
      const created = await this.tokens.create(principal, input);
      sendCreated(res, '/api/tokens', created);
    });

    app.delete('/api/tokens/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const id = idParam(req, 'id', 'Token');
      await this.tokens.delete(principal, id);
      sendJson(res, 200, { id, deleted: true });
    });
  }
}
