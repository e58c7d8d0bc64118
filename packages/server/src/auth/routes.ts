import { type AuthResult, loginRequest, refreshRequest, registerRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard, bearerToken, REFRESH_COOKIE, type TokenGrant } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { DomainError } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { clientAddress, cookies, jsonBody, sendCreated, sendJson } from '../core/http.js';
import { AuthCookies } from './cookies.js';
import { AuthService, type SignedIn } from './service.js';
import { SessionCache } from '../core/session-cache.js';

/** Accounts, sessions and tokens. */
@injectable()
export class AuthRoutes implements Feature {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(AuthService) private readonly auth: AuthService,
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(AuthCookies) private readonly authCookies: AuthCookies,
    @inject(SessionCache) private readonly sessions: SessionCache,
  ) {}

  async start(): Promise<void> {
    await this.sessions.start();
  }

  async stop(): Promise<void> {
    await this.sessions.stop();
  }

  register({ app }: Routes): void {
    app.post('/api/auth/register', async (req, res) => {
      this.guard.refusePersonalAccessToken(req);
      const input = await jsonBody(req, res, registerRequest);
      const signedIn = await this.auth.register(input, clientAddress(req, this.config.trustProxy));
      this.authCookies.set(res, signedIn);
      sendCreated(res, '/api/auth/me', authResult(signedIn));
    });

    app.post('/api/auth/login', async (req, res) => {
      this.guard.refusePersonalAccessToken(req);
      const input = await jsonBody(req, res, loginRequest);
      const signedIn = await this.auth.login(input, clientAddress(req, this.config.trustProxy));
      this.authCookies.set(res, signedIn);
      sendJson(res, 200, authResult(signedIn));
    });

    app.post('/api/auth/refresh', async (req, res) => {
      this.guard.refusePersonalAccessToken(req);
      const input = await jsonBody(req, res, refreshRequest);
      const token = input.refreshToken ?? cookies(req)[REFRESH_COOKIE];
      if (!token) throw refreshMissing();
      const issued = await this.auth.refresh(token);
      this.authCookies.set(res, issued);
      sendJson(res, 200, issued.pair);
    });

    app.post('/api/auth/logout', async (req, res) => {
      this.guard.refusePersonalAccessToken(req);
      const input = await jsonBody(req, res, refreshRequest);
      await this.auth.logout(input.refreshToken ?? cookies(req)[REFRESH_COOKIE], bearerToken(req));
      this.authCookies.clear(res);
      sendJson(res, 200, { ok: true });
    });

    // The one route here a personal access token may call: it says whose the token is.
    app.get('/api/auth/me', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.auth.me(principal.userId), principal.token ? tokenHeaders(principal.token) : {});
    });
  }
}

/**
 * What `GET /api/auth/me` answers about the personal access token it was called with (the record stays the
 * user's): its scope, expiry and, when limited, its projects. A token cannot read /api/tokens.
 */
function tokenHeaders(token: TokenGrant): Record<string, string> {
  return {
    'Band-Token-Scope': token.scope,
    'Band-Token-Expires': token.expiresAt.toISOString(),
    ...(token.projectIds ? { 'Band-Token-Projects': token.projectIds.join(',') } : {}),
  };
}

/** The answer of every sign-in (register, login, a command-line identity-provider code): the user and the tokens. */
export const authResult = ({ user, pair }: SignedIn): AuthResult => ({ user, ...pair });

function refreshMissing() {
  return new DomainError('INVALID_REFRESH_TOKEN', 'No refresh token was sent');
}
