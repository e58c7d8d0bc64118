import { pathOf, ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';
import { PersonalAccessTokenCache } from '../core/personal-access-token-cache.js';
import type { Routes } from '../core/routes.js';
import { TokensService } from './service.js';

/** Personal access tokens: create, list, show, revoke (with a session only: the declarations say so). */
@injectable()
export class TokensRoutes implements Feature {
  constructor(
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
  register(routes: Routes): void {
    routes.on(ROUTES.listTokens, async ({ principal }) => this.tokens.list(principal));

    routes.on(ROUTES.createToken, async ({ principal, body }) => {
      const created = await this.tokens.create(principal, await body());
      return { location: pathOf(ROUTES.getToken, { id: created.id }), body: created };
    });

    routes.on(ROUTES.getToken, async ({ principal, params }) => this.tokens.get(principal, params.id));

    routes.on(ROUTES.deleteToken, async ({ principal, params }) => {
      await this.tokens.delete(principal, params.id);
      return { id: params.id, deleted: true };
    });
  }
}
