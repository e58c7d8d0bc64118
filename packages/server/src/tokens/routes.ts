import type { App } from '@tinyhttp/app';
import { createTokenRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard } from '../core/auth-guard.js';
import type { Feature } from '../core/feature.js';
import { idParam, jsonBody, sendCreated, sendJson } from '../core/http.js';
import { PersonalAccessTokenCache } from '../core/personal-access-token-cache.js';
import { TokensService } from './service.js';

/** Personal access tokens: create, list, revoke (with a session only). */
@injectable()
export class TokensRoutes implements Feature {
  constructor(
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(TokensService) private readonly tokens: TokensService,
    @inject(PersonalAccessTokenCache) private readonly cache: PersonalAccessTokenCache,
  ) {}

  /** The cache of token principals listens for revocations while the server runs. */
  async start(): Promise<void> {
    await this.cache.start();
  }

  async stop(): Promise<void> {
    await this.cache.stop();
  }

  /** GET before POST: a HEAD is answered only where a path's first route is a GET. */
  register(app: App): void {
    app.get('/api/tokens', async (req, res) => {
      const principal = await this.guard.authenticate(req, { sessionOnly: true });
      sendJson(res, 200, await this.tokens.list(principal));
    });

    app.post('/api/tokens', async (req, res) => {
      const principal = await this.guard.authenticate(req, { sessionOnly: true });
      const input = await jsonBody(req, res, createTokenRequest);
      const created = await this.tokens.create(principal, input);
      sendCreated(res, '/api/tokens', created);
    });

    app.delete('/api/tokens/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req, { sessionOnly: true });
      const id = idParam(req, 'id', 'Token');
      await this.tokens.delete(principal, id);
      sendJson(res, 200, { id, deleted: true });
    });
  }
}
