import { localProblem } from '../errors.js';
import type { Transport } from '../transport.js';
import type { AuthResult, IdpExchangeRequest, IdpLinkResult, LoginRequest, LogoutRequest, LogoutResult, Me, RegisterRequest, TokenPair } from '../types.js';

export class AuthResource {
  constructor(private readonly transport: Transport) {}

  /** Creates an account and signs in: the client keeps the tokens and hands them to onTokens. */
  register(request: RegisterRequest): Promise<AuthResult> {
    return this.signIn('/api/auth/register', request);
  }

  login(request: LoginRequest): Promise<AuthResult> {
    return this.signIn('/api/auth/login', request);
  }

  /** Rotates the token pair now (calls made meanwhile wait for it and share it). */
  refresh(): Promise<TokenPair> {
    return this.transport.refresh();
  }

  /** Ends the session server-side and forgets the tokens, even when the server could not be reached. */
  async logout(): Promise<LogoutResult> {
    const { refreshToken } = this.transport.tokens;
    try {
      // The refresh token names the session; an expired access token must not stand in the way.
      return await this.transport.json<LogoutResult>({
        method: 'POST',
        path: '/api/auth/logout',
        json: (refreshToken ? { refreshToken } : {}) satisfies LogoutRequest,
        auth: refreshToken === undefined,
      });
    } finally {
      this.transport.setTokens({});
    }
  }

  me(): Promise<Me> {
    return this.transport.json<Me>({ method: 'GET', path: '/api/auth/me' });
  }

  /**
   * The address to open in a browser to sign in through the identity provider. `cliRedirect` is the
   * loopback address a command-line client listens on for the one-time code, with `codeChallenge` (required
   * then): base64url(SHA-256(verifier)) of a random verifier the client keeps for `exchangeIdpCode`.
   * `redirect` is a same-origin path.
   */
  idpUrl(options: { cliRedirect?: string; codeChallenge?: string; redirect?: string } = {}): string {
    const query = new URLSearchParams();
    if (options.cliRedirect) query.set('cliRedirect', options.cliRedirect);
    if (options.codeChallenge) query.set('code_challenge', options.codeChallenge);
    if (options.redirect) query.set('redirect', options.redirect);
    const search = query.size > 0 ? `?${query}` : '';
    return `${this.transport.baseUrl}/api/auth/idp${search}`;
  }

  /**
   * With the caller's credentials: the address to open in a browser to link the account the user signs in
   * to at the identity provider to this one. The provider comes back to the loopback `cliRedirect` with
   * `?code=` (or `?authError=`); `linkIdp` with that code and the verifier of `codeChallenge` makes the link.
   */
  async idpLinkUrl(options: { cliRedirect: string; codeChallenge: string }): Promise<string> {
    const query = new URLSearchParams({ link: '1', cliRedirect: options.cliRedirect, code_challenge: options.codeChallenge });
    const response = await this.transport.send({ method: 'GET', path: `/api/auth/idp?${query}` });
    await response.body.dump();
    const location = response.headers.location;
    if (response.status !== 302 || typeof location !== 'string') {
      throw localProblem(502, 'INTERNAL', 'Bad Gateway', `expected a redirect to the linking address, got HTTP ${response.status}`);
    }
    return location;
  }

  /** Links the identity-provider account behind a code from `idpLinkUrl`'s flow to the caller's account. */
  linkIdp(request: IdpExchangeRequest): Promise<IdpLinkResult> {
    return this.transport.json<IdpLinkResult>({ method: 'POST', path: '/api/auth/idp/link', json: request });
  }

  /** Trades the one-time code of a command-line identity-provider sign-in, with its verifier, for tokens. */
  exchangeIdpCode(request: IdpExchangeRequest): Promise<AuthResult> {
    return this.signIn('/api/auth/idp/exchange', request);
  }

  private async signIn(path: string, body: object): Promise<AuthResult> {
    const result = await this.transport.json<AuthResult>({ method: 'POST', path, json: body, auth: false });
    await this.transport.storeTokens({
      accessToken: result.accessToken,
      refreshToken: result.refreshToken,
      expiresIn: result.expiresIn,
    });
    return result;
  }
}
