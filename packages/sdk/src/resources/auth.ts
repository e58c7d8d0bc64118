import type { Transport } from '../transport.js';
import type { AuthResult, IdpExchangeRequest, LoginRequest, LogoutRequest, LogoutResult, Me, RegisterRequest, TokenPair } from '../types.js';

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
   * loopback address a command-line client listens on for the one-time code; `redirect` a same-origin path.
   */
  idpUrl(options: { cliRedirect?: string; redirect?: string } = {}): string {
    const query = new URLSearchParams();
    if (options.cliRedirect) query.set('cliRedirect', options.cliRedirect);
    if (options.redirect) query.set('redirect', options.redirect);
    const search = query.size > 0 ? `?${query}` : '';
    return `${this.transport.baseUrl}/api/auth/idp${search}`;
  }

  /** Trades the one-time code of a command-line identity-provider sign-in for tokens. */
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
