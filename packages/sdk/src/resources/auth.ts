import { BandPromise } from '../band-promise.js';
import { localProblem } from '../errors.js';
import { imageFormOrJson } from '../multipart.js';
import type { FileInput } from '../upload-source.js';
import { ROUTES } from '../contract/routes.js';
import { type RequestOptions, routeRequest, type Transport } from '../transport.js';
import type {
  AuthResult,
  ChangePasswordRequest,
  Deleted,
  DeleteAccountRequest,
  IdpExchangeRequest,
  IdpLinkResult,
  LoginRequest,
  LogoutRequest,
  LogoutResult,
  Me,
  OkResult,
  PasswordChangeResult,
  RegisterRequest,
  ResetPasswordRequest,
  TokenPair,
  UpdateMeRequest,
} from '../types.js';

/** The parameters of an identity-provider sign-in (see `AuthResource.idpUrl`). */
interface IdpLogin {
  cliRedirect?: string;
  codeChallenge?: string;
  redirect?: string;
}

/** Where an identity-provider sign-in starts, with its parameters (those given). */
function idpStart(login: IdpLogin) {
  const query = { cliRedirect: login.cliRedirect || undefined, code_challenge: login.codeChallenge || undefined, redirect: login.redirect || undefined };
  return routeRequest(ROUTES.idpStart, { query });
}

export class AuthResource {
  constructor(private readonly transport: Transport) {}

  /** Creates an account and signs in: the client keeps the tokens and hands them to onTokens. */
  register(request: RegisterRequest, options?: RequestOptions): BandPromise<AuthResult> {
    return this.signIn(this.transport.call(ROUTES.register, { json: request }, options));
  }

  login(request: LoginRequest, options?: RequestOptions): BandPromise<AuthResult> {
    return this.signIn(this.transport.call(ROUTES.login, { json: request }, options));
  }

  /**
   * Rotates the token pair now (calls made meanwhile wait for it and share it). With a token store, under
   * its lock: a pair another process already rotated is taken from the store instead.
   */
  refresh(): Promise<TokenPair> {
    return this.transport.refresh();
  }

  /** Ends the session server-side and forgets the tokens, even when the server could not be reached. */
  logout(options?: RequestOptions): BandPromise<LogoutResult> {
    return BandPromise.from(async () => {
      const { refreshToken } = this.transport.tokens;
      try {
        // The refresh token names the session; an expired access token must not stand in the way.
        const request = routeRequest(ROUTES.logout, { json: (refreshToken ? { refreshToken } : {}) satisfies LogoutRequest });
        return await this.transport.json<LogoutResult>({ ...request, auth: refreshToken === undefined }, options).withResponse();
      } finally {
        this.transport.setTokens({});
      }
    });
  }

  me(options?: RequestOptions): BandPromise<Me> {
    return this.transport.call(ROUTES.me, {}, options);
  }

  /** Changes the caller's display name; their projects hear `member.updated`. */
  updateMe(request: UpdateMeRequest, options?: RequestOptions): BandPromise<Me> {
    return this.transport.call(ROUTES.updateMe, { json: request }, options);
  }

  /** Sets the caller's avatar: a JPEG, PNG, GIF or WebP image of at most 5 MiB (a path, bytes, a stream or a Blob). */
  setAvatar(image: FileInput, options?: RequestOptions): BandPromise<Me> {
    return BandPromise.from(async () => {
      const body = await imageFormOrJson({}, image);
      return this.transport.call(ROUTES.setAvatar, { body }, options).withResponse();
    });
  }

  removeAvatar(options?: RequestOptions): BandPromise<Me> {
    return this.transport.call(ROUTES.removeAvatar, {}, options);
  }

  /**
   * Changes the caller's password (`currentPassword` may be left out only by an account that has none yet).
   * Every other session of the account ends; this client's tokens stay valid. After an admin's reset, every
   * other call fails with 403 `PASSWORD_CHANGE_REQUIRED` until this one succeeds.
   */
  changePassword(request: ChangePasswordRequest, options?: RequestOptions): BandPromise<PasswordChangeResult> {
    return this.transport.call(ROUTES.changePassword, { json: request }, options);
  }

  /**
   * Asks for a password reset link by email (§19): resolves alike whether or not the email has an account (the
   * server answers 202 either way). 503 `UNAVAILABLE` when the server has no email; 429 past 5 an hour.
   */
  forgotPassword(email: string, options?: RequestOptions): BandPromise<OkResult> {
    return this.transport.call(ROUTES.forgotPassword, { json: { email } }, options);
  }

  /** Sets a new password with the token of an emailed reset link; every session of the account ends. */
  resetPassword(request: ResetPasswordRequest, options?: RequestOptions): BandPromise<OkResult> {
    return this.transport.call(ROUTES.resetPassword, { json: request }, options);
  }

  /**
   * Deletes the caller's account for good, confirmed by its `password` (or, without one, `confirm`: its
   * email). The client forgets its tokens once the server has deleted the account.
   */
  deleteAccount(request: DeleteAccountRequest, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.deleteAccount, { json: request }, options).map((deleted) => {
      this.transport.setTokens({});
      return deleted;
    });
  }

  /**
   * The address to open in a browser to sign in through the identity provider. `cliRedirect` is the
   * loopback address a command-line client listens on for the one-time code, with `codeChallenge` (required
   * then): base64url(SHA-256(verifier)) of a random verifier the client keeps for `exchangeIdpCode`.
   * `redirect` is a same-origin path.
   */
  idpUrl(login: IdpLogin = {}): string {
    return `${this.transport.baseUrl}${idpStart(login).path}`;
  }

  /**
   * `idpUrl`, once the server confirmed it starts a sign-in there (its answer is a redirect to the provider):
   * rejects with a BandApiError 404 `IDP_DISABLED` when the server has no identity provider, so a client
   * does not send anyone to an error page. The probe starts no session.
   */
  async idpLoginUrl(login: IdpLogin, options?: RequestOptions): Promise<string> {
    const response = await this.transport.send(idpStart(login), options);
    await response.body.dump();
    return this.idpUrl(login);
  }

  /**
   * With the caller's credentials: the address to open in a browser to link the account the user signs in
   * to at the identity provider to this one. The provider comes back to the loopback `cliRedirect` with
   * `?code=` (or `?authError=`); `linkIdp` with that code and the verifier of `codeChallenge` makes the link.
   */
  async idpLinkUrl(link: { cliRedirect: string; codeChallenge: string }, options?: RequestOptions): Promise<string> {
    // Declared `sign-in` (a personal access token is refused), but linking needs the caller's credentials.
    const query = { link: '1', cliRedirect: link.cliRedirect, code_challenge: link.codeChallenge };
    const response = await this.transport.send({ ...routeRequest(ROUTES.idpStart, { query }), auth: true }, options);
    await response.body.dump();
    const location = response.headers.location;
    if (response.status !== 302 || typeof location !== 'string') {
      throw localProblem('INTERNAL', `expected a redirect to the linking address, got HTTP ${response.status}`);
    }
    return location;
  }

  /** Links the identity-provider account behind a code from `idpLinkUrl`'s flow to the caller's account. */
  linkIdp(request: IdpExchangeRequest, options?: RequestOptions): BandPromise<IdpLinkResult> {
    return this.transport.call(ROUTES.idpLink, { json: request }, options);
  }

  /** Trades the one-time code of a command-line identity-provider sign-in, with its verifier, for tokens. */
  exchangeIdpCode(request: IdpExchangeRequest, options?: RequestOptions): BandPromise<AuthResult> {
    return this.signIn(this.transport.call(ROUTES.idpExchange, { json: request }, options));
  }

  /** Keeps the tokens of a sign-in (declared `sign-in`: sent without credentials). */
  private signIn(signingIn: BandPromise<AuthResult>): BandPromise<AuthResult> {
    return signingIn.map(async (result) => {
      await this.transport.storeTokens({
        accessToken: result.accessToken,
        refreshToken: result.refreshToken,
        expiresIn: result.expiresIn,
      });
      return result;
    });
  }
}
