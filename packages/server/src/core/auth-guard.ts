import type { IncomingMessage } from 'node:http';
import { isUuid } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { DomainError, unauthenticated } from './errors.js';
import { cookies } from './http.js';
import { SessionCache } from './session-cache.js';
import type { Principal } from './sessions-repository.js';
import { AccessTokens } from './tokens.js';

export type { Principal };

export const ACCESS_COOKIE = 'access_token';
export const REFRESH_COOKIE = 'refresh_token';

/** Decides who a request is: every authenticated route calls `authenticate` and nothing else. */
@injectable()
export class AuthGuard {
  constructor(
    @inject(AccessTokens) private readonly tokens: AccessTokens,
    @inject(SessionCache) private readonly sessions: SessionCache,
  ) {}

  /**
   * The bearer token, or with `allowCookie` (read-only media and the WebSocket upgrade) the
   * `access_token` cookie. 401 unless the token is valid and its session is still active. An account whose
   * one-time password (reset-password) is not changed yet gets 403 PASSWORD_CHANGE_REQUIRED, except where
   * `passwordChange` lets it change that password.
   */
  async authenticate(req: IncomingMessage, { allowCookie = false, passwordChange = false } = {}): Promise<Principal> {
    const token = bearerToken(req) ?? (allowCookie ? cookies(req)[ACCESS_COOKIE] : undefined);
    if (!token) throw unauthenticated();
    const claims = this.tokens.verify(token);
    if (!isUuid(claims.sub) || !isUuid(claims.sid)) throw unauthenticated('The access token is invalid');
    const principal = await this.sessions.principal(claims.sub, claims.sid);
    if (!principal) throw unauthenticated('The session has ended; log in again');
    if (principal.passwordChangeRequired && !passwordChange) {
      throw new DomainError('PASSWORD_CHANGE_REQUIRED', 'This account has a one-time password: set a new one with POST /api/auth/password first');
    }
    return principal;
  }
}

export function bearerToken(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
}
