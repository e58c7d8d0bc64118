import { type AuthResult, ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { PasswordResets } from './password-reset.js';
import { RESET_PAGE_CSP, renderResetDonePage, renderResetGonePage, renderResetPage } from './reset-page.js';
import { sendHtml } from '../core/html-page.js';
import { bearerToken, REFRESH_COOKIE, type TokenGrant } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { DomainError } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { clientAddress, cookies, smallBody } from '../core/http.js';
import { AuthCookies } from './cookies.js';
import { AuthService, type SignedIn } from './service.js';
import { SessionCache } from '../core/session-cache.js';

/** Accounts, sessions and tokens. */
@injectable()
export class AuthRoutes implements Feature {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(AuthService) private readonly auth: AuthService,
    @inject(AuthCookies) private readonly authCookies: AuthCookies,
    @inject(SessionCache) private readonly sessions: SessionCache,
    @inject(PasswordResets) private readonly resets: PasswordResets,
  ) {}

  async start(): Promise<void> {
    await this.sessions.start();
  }

  async stop(): Promise<void> {
    await this.sessions.stop();
  }

  /** Signing in is refused to a personal access token, as the declarations say (`sign-in`). */
  register(routes: Routes): void {
    routes.on(ROUTES.register, async ({ req, res, body }) => {
      const signedIn = await this.auth.register(await body(), clientAddress(req, this.config.trustProxy));
      this.authCookies.set(res, signedIn);
      return { location: ROUTES.me.path, body: authResult(signedIn) };
    });

    routes.on(ROUTES.forgotPassword, async ({ req, body }) => {
      await this.resets.forgot((await body()).email, clientAddress(req, this.config.trustProxy));
      return { ok: true as const };
    });

    routes.on(ROUTES.resetPassword, async ({ req, body }) => {
      const { token, newPassword } = await body();
      await this.resets.reset(token, newPassword, clientAddress(req, this.config.trustProxy));
      return { ok: true as const };
    });

    // The page shows its form whatever the token: whether a link is live is told only to whoever submits it.
    routes.on(ROUTES.resetPage, async ({ req, res, params }) => {
      sendHtml(req, res, 200, renderResetPage(`/reset/${encodeURIComponent(params.token)}`), RESET_PAGE_CSP);
    });

    routes.on(ROUTES.resetPageSubmit, async ({ req, res, params }) => {
      const action = `/reset/${encodeURIComponent(params.token)}`;
      const form = new URLSearchParams(await smallBody(req));
      const newPassword = form.get('newPassword') ?? '';
      if (newPassword.length < 8 || newPassword.length > 1024) {
        sendHtml(req, res, 400, renderResetPage(action, 'The password must be 8 to 1024 characters long.'), RESET_PAGE_CSP);
        return;
      }
      if (form.get('confirm') !== newPassword) {
        sendHtml(req, res, 400, renderResetPage(action, 'The two passwords differ: type the same one twice.'), RESET_PAGE_CSP);
        return;
      }
      try {
        await this.resets.reset(params.token, newPassword, clientAddress(req, this.config.trustProxy));
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'VALIDATION_FAILED')) throw error;
        sendHtml(req, res, 400, renderResetGonePage(), RESET_PAGE_CSP);
        return;
      }
      sendHtml(req, res, 200, renderResetDonePage(), RESET_PAGE_CSP);
    });

    routes.on(ROUTES.login, async ({ req, res, body }) => {
      const signedIn = await this.auth.login(await body(), clientAddress(req, this.config.trustProxy), cookies(req)[REFRESH_COOKIE]);
      this.authCookies.set(res, signedIn);
      return authResult(signedIn);
    });

    routes.on(ROUTES.refresh, async ({ req, res, body }) => {
      const token = (await body()).refreshToken ?? cookies(req)[REFRESH_COOKIE];
      if (!token) throw refreshMissing();
      const issued = await this.auth.refresh(token);
      this.authCookies.set(res, issued);
      return issued.pair;
    });

    routes.on(ROUTES.logout, async ({ req, res, body }) => {
      await this.auth.logout((await body()).refreshToken ?? cookies(req)[REFRESH_COOKIE], bearerToken(req));
      this.authCookies.clear(res);
      return { ok: true };
    });

    // The one route here a personal access token may call: it says whose the token is.
    routes.on(ROUTES.me, async ({ res, principal }) => {
      if (principal.token) for (const [name, value] of Object.entries(tokenHeaders(principal.token))) res.setHeader(name, value);
      return this.auth.me(principal.userId);
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
