import { BandPromise, type WithResponse } from '../band-promise.js';
import { ROUTES } from '../contract/routes.js';
import { type RequestOptions, single, type Transport } from '../transport.js';
import type { CreatedPersonalAccessToken, CreateTokenRequest, Deleted, Me, PersonalAccessToken, TokenScope } from '../types.js';

/** The personal access token a client runs on, as the server describes it. */
export interface CurrentToken {
  scope: TokenScope;
  /** ISO 8601. */
  expiresAt: string;
  /** null: every project of its owner. */
  projectIds: string[] | null;
}

/**
 * Personal access tokens (`bcp_…`) for CI and scripts. Managing them needs a signed-in session: the server
 * refuses a client that itself runs on a personal access token (403 INSUFFICIENT_SCOPE).
 */
export class TokensResource {
  constructor(private readonly transport: Transport) {}

  /** A new token; `token` (the secret) is in this answer only. `expiresIn` in seconds (1 hour to 366 days). */
  create(input: CreateTokenRequest, options?: RequestOptions): BandPromise<CreatedPersonalAccessToken> {
    return this.transport.call(ROUTES.createToken, { json: input }, options);
  }

  /** The caller's live tokens, newest first (without their secrets). */
  list(options?: RequestOptions): BandPromise<PersonalAccessToken[]> {
    return this.transport.call(ROUTES.listTokens, {}, options);
  }

  /** One of the caller's live tokens (without its secret). */
  get(id: string, options?: RequestOptions): BandPromise<PersonalAccessToken> {
    return this.transport.call(ROUTES.getToken, { params: { id } }, options);
  }

  /**
   * Who this client acts as and, when it runs on a personal access token, that token's scope, expiry and
   * projects (`token` is null with a session). From GET /api/auth/me, which a token may call.
   */
  current(options?: RequestOptions): BandPromise<{ me: Me; token: CurrentToken | null }> {
    return BandPromise.from(async (): Promise<WithResponse<{ me: Me; token: CurrentToken | null }>> => {
      const { data: me, response } = await this.transport.call(ROUTES.me, {}, options).withResponse();
      const scope = single(response.headers['band-token-scope']);
      const expiresAt = single(response.headers['band-token-expires']);
      if ((scope !== 'read' && scope !== 'write') || expiresAt === undefined) return { data: { me, token: null }, response };
      const projects = single(response.headers['band-token-projects']);
      return { data: { me, token: { scope, expiresAt, projectIds: projects ? projects.split(',') : null } }, response };
    });
  }

  /** Revokes a token: it stops working at once. */
  delete(id: string, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.deleteToken, { params: { id } }, options);
  }
}
