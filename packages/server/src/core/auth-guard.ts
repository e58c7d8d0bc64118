import type { IncomingMessage } from 'node:http';
import { isUuid } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Config } from './config.js';
import { CONFIG } from './di.js';
import { DomainError, unauthenticated } from './errors.js';
import { cookies } from './http.js';
import { isTrustedOrigin } from './origins.js';
import { isValidPersonalAccessToken, looksLikePersonalAccessToken } from './personal-access-tokens.js';
import { PersonalAccessTokenCache } from './personal-access-token-cache.js';
import { SessionCache } from './session-cache.js';
import type { Principal, TokenGrant, TokenPrincipal } from './sessions-repository.js';
import { AccessTokens, hashToken } from './tokens.js';

export type { Principal, TokenGrant, TokenPrincipal };

export const ACCESS_COOKIE = 'access_token';
export const REFRESH_COOKIE = 'refresh_token';

/**
 * Decides who a request is: Routes.on calls `authenticate` as a route's declaration says; the events upgrade
 * (not a route) and a link=1 identity-provider start (signed in only to link) call it themselves.
 */
@injectable()
export class AuthGuard {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(AccessTokens) private readonly tokens: AccessTokens,
    @inject(SessionCache) private readonly sessions: SessionCache,
    @inject(PersonalAccessTokenCache) private readonly personalTokens: PersonalAccessTokenCache,
  ) {}

  /**
   * The bearer token, or with `allowCookie` (read-only media and the WebSocket upgrade) or from a trusted page
   * (fromTrustedPage) the `access_token` cookie. 401 unless the token is valid and its session is still active. A personal
   * access token (bearer only) is live, unexpired and used within its scope: any scope reads (GET, HEAD, the
   * WebSocket upgrade), only `write` writes, only `review` reviews, else 403 INSUFFICIENT_SCOPE. A route declared `session` or
   * `sign-in` refuses every personal access token before this, see `refusePersonalAccessToken`. An account
   * whose one-time password (reset-password) is not changed yet gets 403 PASSWORD_CHANGE_REQUIRED, except
   * where `passwordChange` lets it change that password.
   */
  async authenticate(
    req: IncomingMessage,
    { allowCookie = false, allowSubprotocol = false, passwordChange = false, scope }: AuthenticateOptions,
  ): Promise<Principal> {
    const principal = await this.identify(req, allowCookie, allowSubprotocol, scope);
    if (principal.passwordChangeRequired && !passwordChange) {
      throw new DomainError('PASSWORD_CHANGE_REQUIRED', 'This account has a one-time password: set a new one with POST /api/auth/password first');
    }
    return principal;
  }

  /**
   * A personal access token cannot sign in, change its owner's sign-in or manage tokens. Routes that do are
   * declared `session` (those that authenticate) or `sign-in` (register, login, refresh, logout, the identity
   * provider's), and Routes.on calls this first for them. 403 INSUFFICIENT_SCOPE for a request that carries one, judged
   * on the token's prefix alone (valid or not), before anything else the route does.
   */
  refusePersonalAccessToken(req: IncomingMessage): void {
    const bearer = bearerToken(req);
    if (bearer !== undefined && looksLikePersonalAccessToken(bearer)) {
      throw insufficientScope('A personal access token cannot sign in, change its owner’s sign-in or manage tokens');
    }
  }

  private async identify(req: IncomingMessage, allowCookie: boolean, allowSubprotocol: boolean, scope: TokenScope): Promise<Principal> {
    const bearer = bearerToken(req) ?? (allowSubprotocol ? subprotocolToken(req) : undefined);
    if (bearer !== undefined && looksLikePersonalAccessToken(bearer)) return this.personalAccessToken(bearer, scope);
    const token = bearer ?? (allowCookie || this.fromTrustedPage(req) ? cookies(req)[ACCESS_COOKIE] : undefined);
    if (!token) throw unauthenticated();
    const claims = this.tokens.verify(token);
    if (!isUuid(claims.sub) || !isUuid(claims.sid)) throw unauthenticated('The access token is invalid');
    const principal = await this.sessions.principal(claims.sub, claims.sid);
    if (!principal) throw unauthenticated('The session has ended; log in again');
    return principal;
  }

  /**
   * A browser app's request (cookie mode, API §17): its own page (Sec-Fetch-Site, which scripts cannot set), or a
   * page of a trusted origin (Origin, sent with every cross-origin fetch). A form or link of another site has
   * neither, so the cookie alone never authenticates what a foreign page makes the browser send.
   */
  private fromTrustedPage(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    return req.headers['sec-fetch-site'] === 'same-origin' || (origin !== undefined && isTrustedOrigin(this.config, origin));
  }

  private async personalAccessToken(token: string, scope: TokenScope): Promise<TokenPrincipal> {
    if (!isValidPersonalAccessToken(token)) throw unauthenticated('The personal access token is malformed');
    const principal = await this.personalTokens.principal(hashToken(token));
    if (!principal) throw unauthenticated('The personal access token is unknown, revoked or expired');
    if (scope === 'write' && principal.token.scope !== 'write') {
      throw insufficientScope(`A ${principal.token.scope} token can only read (GET, HEAD and the events stream)${principal.token.scope === 'review' ? ' and review' : ''}`);
    }
    if (scope === 'review' && principal.token.scope !== 'review') {
      throw insufficientScope('Reviews need a person’s session or a token with the review scope (write does not include it)');
    }
    return principal;
  }
}

/** What a route needs of a personal access token (the `read` of any scope, or `write`, or `review`). */
type TokenScope = 'read' | 'write' | 'review';

interface AuthenticateOptions {
  allowCookie?: boolean;
  /** The WebSocket upgrade: a browser, which cannot set Authorization, offers the token as a subprotocol. */
  allowSubprotocol?: boolean;
  passwordChange?: boolean;
  /** What a personal access token needs: the route's declared scope. */
  scope: TokenScope;
}

export function bearerToken(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
}

/** The subprotocol a browser sends its token in: `bandcollab.bearer.<base64url(token)>` (API §17). */
export const BEARER_SUBPROTOCOL_PREFIX = 'bandcollab.bearer.';

/** The token of a `bandcollab.bearer.*` subprotocol offered in Sec-WebSocket-Protocol, if any. */
function subprotocolToken(req: IncomingMessage): string | undefined {
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((protocol) => protocol.trim());
  const encoded = offered.find((protocol) => protocol.startsWith(BEARER_SUBPROTOCOL_PREFIX))?.slice(BEARER_SUBPROTOCOL_PREFIX.length);
  return encoded ? Buffer.from(encoded, 'base64url').toString('utf8') : undefined;
}

export const insufficientScope = (detail: string): DomainError => new DomainError('INSUFFICIENT_SCOPE', detail);

/** Whether the project exists for the principal at all: a token limited to projects reaches only those. */
export const reaches = (principal: Principal, projectId: string): boolean => principal.token?.projectIds?.includes(projectId) ?? true;

/** Creating or joining a project reaches beyond a token limited to projects: 403 INSUFFICIENT_SCOPE for one. */
export function requireEveryProject(principal: Principal, action: string): void {
  if (principal.token?.projectIds) throw insufficientScope(`A token limited to projects cannot ${action}`);
}
