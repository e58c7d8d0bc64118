import type { ServerResponse } from 'node:http';
import { ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard, bearerToken } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { invalidField } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { appendCookie, cookies } from '../core/http.js';
import { AuthCookies } from './cookies.js';
import { authResult } from './routes.js';
import { FLOW_COOKIE, FLOW_COOKIE_PATH, FLOW_SECONDS, isLoopbackRedirect, isS256Challenge, sameOriginPath } from './idp-flow.js';
import { IdpService, type StartedFlow } from './idp-service.js';

/** Sign-in through an external OpenID Connect provider. */
@injectable()
export class IdpRoutes implements Feature {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(IdpService) private readonly idp: IdpService,
    @inject(AuthCookies) private readonly authCookies: AuthCookies,
    @inject(AuthGuard) private readonly guard: AuthGuard,
  ) {}

  /**
   * Every route here signs in or links a sign-in: its declaration refuses a personal access token first, even
   * with the provider off; then a provider that is off answers 404 IDP_DISABLED to everyone, signed in or not.
   */
  register(routes: Routes): void {
    const before = () => this.idp.requireEnabled();

    routes.on(ROUTES.idpStart, async ({ req, res, query }) => {
      const { redirect, cliRedirect, code_challenge: codeChallenge, link, flow } = query;
      if (flow !== undefined) return this.startFlow(res, await this.idp.resume(flow));
      if (cliRedirect !== undefined && !isLoopbackRedirect(cliRedirect)) {
        throw invalidField('cliRedirect', 'must be an http URL on 127.0.0.1, [::1] or localhost with an explicit port');
      }
      const challenge = isS256Challenge(codeChallenge) ? codeChallenge : null;
      // A command-line flow's code goes to the process that holds the verifier of this challenge, only.
      if (cliRedirect !== undefined && challenge === null) {
        throw invalidField('code_challenge', 'must be the S256 challenge (43 base64url characters) of a command-line flow');
      }
      const target = { redirect: sameOriginPath(redirect), cliRedirect: cliRedirect ?? null, codeChallenge: challenge };
      if (link !== '1') return this.startFlow(res, await this.idp.begin({ ...target, linkUserId: null }));

      // Declared `sign-in` (a personal access token was refused): only linking needs a caller, a session.
      const { userId } = await this.guard.authenticate(req, { allowCookie: true, scope: 'read' });
      if (bearerToken(req) === undefined) return this.startFlow(res, await this.idp.begin({ ...target, linkUserId: userId }));
      // A Bearer token comes from a program, not from the browser that must carry the flow cookie to the
      // callback: it gets the address to open there, and redeems the outcome at its loopback listener.
      if (cliRedirect === undefined || challenge === null) {
        throw invalidField('cliRedirect', 'a program links through its loopback redirect, with code_challenge');
      }
      redirectTo(res, this.idp.handOff({ ...target, cliRedirect, codeChallenge: challenge, linkUserId: userId }));
    }, { before });

    routes.on(ROUTES.idpCallback, async ({ req, res }) => {
      const search = new URL(req.originalUrl ?? req.url, 'http://callback').search;
      const outcome = await this.idp.complete(search, cookies(req)[FLOW_COOKIE]);
      this.setFlowCookie(res, '', 0);
      if (outcome.signedIn) this.authCookies.set(res, outcome.signedIn);
      redirectTo(res, outcome.location);
    }, { before });

    routes.on(ROUTES.idpExchange, async ({ res, body }) => {
      const input = await body();
      const signedIn = await this.idp.exchangeCliCode(input.code, input.redirectUri, input.codeVerifier);
      this.authCookies.set(res, signedIn);
      return authResult(signedIn);
    }, { before });

    routes.on(ROUTES.idpLink, async ({ principal, body }) => {
      const input = await body();
      await this.idp.linkWithCliCode(principal.userId, input.code, input.redirectUri, input.codeVerifier);
      return { ok: true };
    }, { before });
  }

  private startFlow(res: ServerResponse, started: StartedFlow): void {
    if (started.flowCookie !== null) this.setFlowCookie(res, started.flowCookie, FLOW_SECONDS);
    redirectTo(res, started.location);
  }

  /** Lax, not Strict: the provider's redirect back to the callback is a cross-site navigation. */
  private setFlowCookie(res: ServerResponse, value: string, maxAge: number): void {
    appendCookie(res, FLOW_COOKIE, value, {
      httpOnly: true,
      sameSite: 'Lax',
      path: FLOW_COOKIE_PATH,
      maxAge,
      secure: this.config.cookieSecure,
    });
  }
}

function redirectTo(res: ServerResponse, location: string): void {
  res.writeHead(302, { Location: location, 'Cache-Control': 'no-store' });
  res.end();
}
