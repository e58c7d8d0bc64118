import type { ServerResponse } from 'node:http';
import { idpExchangeRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard, bearerToken } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { invalidField } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { appendCookie, cookies, jsonBody, sendJson } from '../core/http.js';
import { AuthCookies } from './cookies.js';
import { authResult } from './routes.js';
import { FLOW_COOKIE, FLOW_COOKIE_PATH, FLOW_SECONDS, isLoopbackRedirect, isS256Challenge, sameOriginPath } from './idp-flow.js';
import { CALLBACK_PATH, IdpService, START_PATH, type StartedFlow } from './idp-service.js';

/** Sign-in through an external OpenID Connect provider. */
@injectable()
export class IdpRoutes implements Feature {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(IdpService) private readonly idp: IdpService,
    @inject(AuthCookies) private readonly authCookies: AuthCookies,
    @inject(AuthGuard) private readonly guard: AuthGuard,
  ) {}

  /** Every route here signs in or links a sign-in: a personal access token is refused first, even with the provider off. */
  register({ app }: Routes): void {
    app.get(START_PATH, async (req, res) => {
      this.guard.refusePersonalAccessToken(req);
      this.idp.requireEnabled();
      const { redirect, cliRedirect, code_challenge: codeChallenge, link, flow } = req.query;
      if (typeof flow === 'string') return this.startFlow(res, await this.idp.resume(flow));
      if (cliRedirect !== undefined && (typeof cliRedirect !== 'string' || !isLoopbackRedirect(cliRedirect))) {
        throw invalidField('cliRedirect', 'must be an http URL on 127.0.0.1, [::1] or localhost with an explicit port');
      }
      const challenge = isS256Challenge(codeChallenge) ? codeChallenge : null;
      // A command-line flow's code goes to the process that holds the verifier of this challenge, only.
      if (cliRedirect !== undefined && challenge === null) {
        throw invalidField('code_challenge', 'must be the S256 challenge (43 base64url characters) of a command-line flow');
      }
      const target = { redirect: sameOriginPath(redirect), cliRedirect: cliRedirect ?? null, codeChallenge: challenge };
      if (link !== '1') return this.startFlow(res, await this.idp.begin({ ...target, linkUserId: null }));

      const { userId } = await this.guard.authenticate(req, { allowCookie: true });
      if (bearerToken(req) === undefined) return this.startFlow(res, await this.idp.begin({ ...target, linkUserId: userId }));
      // A Bearer token comes from a program, not from the browser that must carry the flow cookie to the
      // callback: it gets the address to open there, and redeems the outcome at its loopback listener.
      if (cliRedirect === undefined || challenge === null) {
        throw invalidField('cliRedirect', 'a program links through its loopback redirect, with code_challenge');
      }
      redirectTo(res, this.idp.handOff({ ...target, cliRedirect, codeChallenge: challenge, linkUserId: userId }));
    });

    app.get(CALLBACK_PATH, async (req, res) => {
      this.guard.refusePersonalAccessToken(req);
      this.idp.requireEnabled();
      const search = new URL(req.originalUrl ?? req.url, 'http://callback').search;
      const outcome = await this.idp.complete(search, cookies(req)[FLOW_COOKIE]);
      this.setFlowCookie(res, '', 0);
      if (outcome.signedIn) this.authCookies.set(res, outcome.signedIn);
      redirectTo(res, outcome.location);
    });

    app.post('/api/auth/idp/exchange', async (req, res) => {
      this.guard.refusePersonalAccessToken(req);
      this.idp.requireEnabled();
      const input = await jsonBody(req, res, idpExchangeRequest);
      const signedIn = await this.idp.exchangeCliCode(input.code, input.redirectUri, input.codeVerifier);
      this.authCookies.set(res, signedIn);
      sendJson(res, 200, authResult(signedIn));
    });

    app.post('/api/auth/idp/link', async (req, res) => {
      this.guard.refusePersonalAccessToken(req);
      this.idp.requireEnabled();
      const { userId } = await this.guard.authenticate(req);
      const input = await jsonBody(req, res, idpExchangeRequest);
      await this.idp.linkWithCliCode(userId, input.code, input.redirectUri, input.codeVerifier);
      sendJson(res, 200, { ok: true });
    });
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
