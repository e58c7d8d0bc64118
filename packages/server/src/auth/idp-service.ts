import * as oidc from 'openid-client';
import { inject, injectable } from 'tsyringe';
import type { Config, OidcSettings } from '../core/config.js';
import type { Sql } from '../core/database.js';
import { CONFIG, LOGGER, SIGNING_SECRET, SQL } from '../core/di.js';
import { ApiError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { emailSchema, nameSchema } from '../core/validation.js';
import { type IdpFlow, FLOW_SECONDS, isLoopbackHost, openFlow, sealFlow, withParam } from './idp-flow.js';
import { IdpRepository } from './idp-repository.js';
import { AuthRepository, type UserRow } from './repository.js';
import { AuthService, signedIn, type SignedIn } from './service.js';
import { hashToken, randomToken } from './tokens.js';

export const CALLBACK_PATH = '/api/auth/idp/callback';
const CLI_CODE_SECONDS = 60;
const PROVIDER_TIMEOUT_SECONDS = 10;

/** The `authError` values a failed sign-in lands with. */
export type IdpError =
  | 'expired_flow'
  | 'invalid_state'
  | 'access_denied'
  | 'provider_error'
  | 'provider_unavailable'
  | 'exchange_failed'
  | 'email_missing'
  | 'email_not_verified'
  | 'server_error';

class SignInFailure extends Error {
  constructor(readonly code: IdpError) {
    super(code);
  }
}

/** Where the callback sends the browser, and the session to set cookies for (browser sign-ins only). */
export interface CallbackOutcome {
  location: string;
  signedIn: SignedIn | null;
}

interface ProviderProfile {
  issuer: string;
  subject: string;
  email: string;
  emailVerified: boolean;
  name: string;
}

const idpDisabled = () =>
  new ApiError(404, 'IDP_DISABLED', 'Sign-in through an identity provider is not configured on this server');
const invalidCliCode = () =>
  new ApiError(401, 'INVALID_CREDENTIALS', 'The sign-in code is unknown, expired, already used or meant for another redirect');

@injectable()
export class IdpService {
  private configuration: Promise<oidc.Configuration> | null = null;

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(SIGNING_SECRET) private readonly secret: string,
    @inject(SQL) private readonly sql: Sql,
    @inject(LOGGER) private readonly log: Logger,
    @inject(IdpRepository) private readonly repository: IdpRepository,
    @inject(AuthRepository) private readonly users: AuthRepository,
    @inject(AuthService) private readonly auth: AuthService,
  ) {}

  /** The provider settings; 404 IDP_DISABLED when they are not configured. Every route checks this first. */
  requireEnabled(): OidcSettings {
    if (!this.config.oidc) throw idpDisabled();
    return this.config.oidc;
  }

  /**
   * The provider's authorization URL (code flow, PKCE S256, state, nonce) and the sealed flow cookie.
   * When the provider cannot be reached, the URL is the failure landing instead and there is no cookie.
   */
  async begin(target: { redirect: string | null; cliRedirect: string | null }): Promise<{ location: string; flowCookie: string | null }> {
    const settings = this.requireEnabled();
    let configuration: oidc.Configuration;
    try {
      configuration = await this.provider();
    } catch (error) {
      this.log.warn('identity provider discovery failed', { issuer: settings.issuer, error });
      return { location: this.failureLocation(target.cliRedirect, 'provider_unavailable'), flowCookie: null };
    }
    const flow: IdpFlow = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
      ...target,
      expiresAt: Date.now() + FLOW_SECONDS * 1000,
    };
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.callbackUrl(),
      response_type: 'code',
      scope: settings.scopes,
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { location: url.href, flowCookie: sealFlow(this.secret, flow) };
  }

  /**
   * Finishes a sign-in: checks the flow cookie and state, exchanges the code, validates the ID token, finds
   * or creates the account. Never throws for a failed sign-in: the outcome then carries `?authError=`.
   */
  async complete(search: string, flowCookie: string | undefined): Promise<CallbackOutcome> {
    // A browser drops the cookie when it expires: a missing cookie is most likely an expired flow.
    if (!flowCookie) return this.failure(null, 'expired_flow');
    const opened = openFlow(this.secret, flowCookie);
    if (!opened.ok && opened.reason === 'tampered') return this.failure(null, 'invalid_state');
    if (!opened.ok) return this.failure(opened.flow.cliRedirect, 'expired_flow');
    const { flow } = opened;
    try {
      const profile = await this.profileFromCallback(search, flow);
      const user = await this.findOrCreateUser(profile);
      if (flow.cliRedirect !== null) {
        const code = randomToken();
        await this.repository.insertCliCode(hashToken(code), user.id, flow.cliRedirect, CLI_CODE_SECONDS);
        return { location: withParam(flow.cliRedirect, 'code', code), signedIn: null };
      }
      const signedIn = await this.signIn(user);
      return { location: `${this.config.appUrl}${flow.redirect ?? ''}`, signedIn };
    } catch (error) {
      if (error instanceof SignInFailure) return this.failure(flow.cliRedirect, error.code);
      this.log.error('identity provider sign-in failed', { error });
      return this.failure(flow.cliRedirect, 'server_error');
    }
  }

  /** Redeems a command-line code once, for the loopback redirect it was issued to: a new 1-day session. */
  async exchangeCliCode(code: string, redirectUri: string): Promise<SignedIn> {
    const issued = await this.repository.consumeCliCode(hashToken(code));
    if (!issued || issued.redirect_uri !== redirectUri) throw invalidCliCode();
    const user = await this.users.findUserById(issued.user_id);
    if (!user) throw invalidCliCode();
    return this.signIn(user);
  }

  private async signIn(user: UserRow): Promise<SignedIn> {
    return signedIn(user, await this.sql.begin((tx) => this.auth.startSession(tx, user.id, false)));
  }

  private async profileFromCallback(search: string, flow: IdpFlow): Promise<ProviderProfile> {
    const callback = new URL(this.callbackUrl());
    callback.search = search;
    if (callback.searchParams.get('state') !== flow.state) throw new SignInFailure('invalid_state');
    const providerError = callback.searchParams.get('error');
    if (providerError !== null) throw new SignInFailure(providerError === 'access_denied' ? 'access_denied' : 'provider_error');

    let configuration: oidc.Configuration;
    try {
      configuration = await this.provider();
    } catch (error) {
      this.log.warn('identity provider discovery failed', { error });
      throw new SignInFailure('provider_unavailable');
    }
    let claims: Record<string, unknown>;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callback, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims()!;
      claims = { ...idToken };
      // Providers that follow OpenID Connect to the letter put profile claims only in the UserInfo response.
      if (idToken.email === undefined && configuration.serverMetadata().userinfo_endpoint) {
        claims = { ...(await oidc.fetchUserInfo(configuration, tokens.access_token, idToken.sub)), ...idToken };
      }
    } catch (error) {
      this.log.warn('identity provider code exchange failed', { error });
      throw new SignInFailure('exchange_failed');
    }

    const email = emailSchema.safeParse(claims.email);
    if (!email.success) throw new SignInFailure('email_missing');
    return {
      issuer: configuration.serverMetadata().issuer,
      subject: String(claims.sub),
      email: email.data,
      emailVerified: claims.email_verified === true,
      name: displayName(claims, email.data),
    };
  }

  /** Linked subject first; else the same email, only when the provider vouches for it; else a new account. */
  private async findOrCreateUser(profile: ProviderProfile): Promise<UserRow> {
    const linked = await this.repository.findLinkedUser(profile.issuer, profile.subject);
    if (linked) return linked;
    const existing = await this.users.findUserByEmail(profile.email);
    if (existing && !profile.emailVerified) throw new SignInFailure('email_not_verified');
    const user = existing ?? (await this.auth.createPasswordlessUser(profile.email, profile.name));
    await this.repository.link(profile.issuer, profile.subject, user.id);
    return user;
  }

  private failure(cliRedirect: string | null, code: IdpError): CallbackOutcome {
    return { location: this.failureLocation(cliRedirect, code), signedIn: null };
  }

  private failureLocation(cliRedirect: string | null, code: IdpError): string {
    return withParam(cliRedirect ?? this.config.appUrl, 'authError', code);
  }

  private callbackUrl(): string {
    return `${this.config.publicUrl}${CALLBACK_PATH}`;
  }

  /** Discovers the provider once; a failed discovery is retried by the next sign-in. */
  private provider(): Promise<oidc.Configuration> {
    const settings = this.requireEnabled();
    this.configuration ??= discover(settings).catch((error: unknown) => {
      this.configuration = null;
      throw error;
    });
    return this.configuration;
  }
}

async function discover(settings: OidcSettings): Promise<oidc.Configuration> {
  const issuer = new URL(settings.issuer);
  // openid-client refuses plain http; allowed only for a provider on this machine (development and tests).
  const insecureLoopback = issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname);
  return oidc.discovery(
    issuer,
    settings.clientId,
    { client_secret: settings.clientSecret },
    oidc.ClientSecretBasic(settings.clientSecret),
    {
      timeout: PROVIDER_TIMEOUT_SECONDS,
      // Also verify the ID token's signature against the provider's keys, not only trust the TLS channel.
      execute: insecureLoopback ? [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks] : [oidc.enableNonRepudiationChecks],
    },
  );
}

/** The provider's display name, made to fit our name rules; the email's local part when it has none usable. */
function displayName(claims: Record<string, unknown>, email: string): string {
  for (const candidate of [claims.name, claims.preferred_username]) {
    if (typeof candidate !== 'string') continue;
    const parsed = nameSchema.safeParse(candidate.replace(/\p{Cc}/gu, ' ').trim().slice(0, 200));
    if (parsed.success) return parsed.data;
  }
  return email.split('@')[0]!.slice(0, 200);
}
