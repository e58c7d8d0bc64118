import { type RequestOptions, segment, type Transport } from '../transport.js';
import type { CreatedPersonalAccessToken, CreateTokenRequest, Deleted, PersonalAccessToken } from '../types.js';

/**
 * Personal access tokens (`bcp_…`) for CI and scripts. Managing them needs a signed-in session: the server
 * refuses a client that itself runs on a personal access token (403 INSUFFICIENT_SCOPE).
 */
export class TokensResource {
  constructor(private readonly transport: Transport) {}

  /** A new token; `token` (the secret) is in this answer only. `expiresIn` in seconds (1 hour to 366 days). */
  create(input: CreateTokenRequest, options?: RequestOptions): Promise<CreatedPersonalAccessToken> {
    return this.transport.json<CreatedPersonalAccessToken>({ method: 'POST', path: '/api/tokens', json: input }, options);
  }

  /** The caller's live tokens, newest first (without their secrets). */
  list(options?: RequestOptions): Promise<PersonalAccessToken[]> {
    return this.transport.json<PersonalAccessToken[]>({ method: 'GET', path: '/api/tokens' }, options);
  }

  /** Revokes a token: it stops working at once. */
  delete(id: string, options?: RequestOptions): Promise<Deleted> {
    return this.transport.json<Deleted>({ method: 'DELETE', path: `/api/tokens/${segment(id)}` }, options);
  }
}
