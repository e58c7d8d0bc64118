import * as oidc from 'openid-client';
import { emailSchema, nameSchema, ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Config, OidcSettings } from '../core/config.js';
import type { Sql } from '../core/database.js';
import { CONFIG, LOGGER, SIGNING_SECRET, SQL } from '../core/di.js';
import { AccountDeactivated, DomainError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { type IdpFlow, FLOW_SECONDS, isLoopbackHost, openFlow, sealFlow, verifierMatches, withParam } from './idp-flow.js';
import { type Identity, IdpRepository } from './idp-repository.js';
import { AuthRepository, type UserRow } from './repository.js';
import { AuthService, signedIn, type SignedIn } from './service.js';
import { hashToken, randomToken } from '../core/tokens.js';

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
  | 'account_exists'
  | 'identity_in_use'
  | 'account_deactivated'
  | 'server_error';

class SignInFailure extends Error {
  constructor(readonly code: IdpError) {
    super(code);
  }
}

/** Where a flow starts (the provider, or a failure landing) and the sealed flow cookie to set, if any. */
export interface StartedFlow {
  location: string;
  flowCookie: string | null;
}

/** What `GET /api/auth/idp` asked for, checked by the route. */
export interface FlowRequest {
  redirect: string | null;
  cliRedirect: string | null;
  codeChallenge: string | null;
  linkUserId: string | null;
}

/** Where the callback sends the browser, and the session to set cookies for (browser sign-ins only). */
export interface CallbackOutcome {
  location: string;
  signedIn: SignedIn | null;
}

interface ProviderProfile {
  identity: Identity;
  /** What a new account would get; null when the provider gave no usable email (a link does not need one). */
  account: { email: string; emailVerified: boolean; name: string } | null;
}

const idpDisabled = () =>
  new DomainError('IDP_DISABLED', 'Sign-in through an identity provider is not configured on this server');
const invalidCliCode = () =>
  new DomainError('INVALID_CREDENTIALS', 'The code is unknown, expired, already used, or not meant for this redirect, verifier or account');

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
  async begin(target: FlowRequest): Promise<StartedFlow> {
    return this.toProvider(newFlow(target));
  }

  /**
   * For a command line linking its account (a Bearer token, not the browser): the address that starts the
   * flow in the browser, which receives the flow cookie there. The provider account that completes it is
   * linked only when the command line redeems the code that comes back to its loopback listener, with its
   * verifier and its token (`linkWithCliCode`): an address passed on to someone else links nothing.
   */
  handOff(target: FlowRequest & { linkUserId: string; cliRedirect: string; codeChallenge: string }): string {
    return withParam(`${this.config.publicUrl}${ROUTES.idpStart.path}`, 'flow', sealFlow(this.secret, newFlow(target)));
  }

  /**
   * Opens a handed-off flow in the browser: sets it as the flow cookie and goes on to the provider. Only a
   * command-line link resumes so: any other flow planted in someone's browser would act on its result there.
   */
  async resume(sealed: string): Promise<StartedFlow> {
    const opened = openFlow(this.secret, sealed);
    if (!opened.ok && opened.reason === 'expired') return { location: this.failureLocation(opened.flow.cliRedirect, 'expired_flow'), flowCookie: null };
    if (!opened.ok || !isHandOff(opened.flow)) return { location: this.failureLocation(null, 'invalid_state'), flowCookie: null };
    return this.toProvider(opened.flow);
  }

  /** The provider's authorization URL for `flow`; the failure landing when the provider cannot be reached. */
  private async toProvider(flow: IdpFlow): Promise<StartedFlow> {
    const settings = this.requireEnabled();
    let configuration: oidc.Configuration;
    try {
      configuration = await this.provider();
    } catch (error) {
      this.log.warn('identity provider discovery failed', { issuer: settings.issuer, error });
      return { location: this.failureLocation(flow.cliRedirect, 'provider_unavailable'), flowCookie: null };
    }
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
   * Finishes a sign-in or a link: checks the flow cookie and state, exchanges the code, validates the ID
   * token, then links the subject or finds or creates the account. Never throws for a failed sign-in: the
   * outcome then carries `?authError=`. A link sets no cookies: the caller stays signed in as they were.
   */
  async complete(search: string, flowCookie: string | undefined): Promise<CallbackOutcome> {
    // A browser drops the cookie when it expires: a missing cookie is most likely an expired flow.
    if (!flowCookie) return this.failure(null, 'expired_flow');
    const opened = openFlow(this.secret, flowCookie);
    if (!opened.ok && opened.reason === 'tampered') return this.failure(null, 'invalid_state');
    if (!opened.ok) return this.failure(opened.flow.cliRedirect, 'expired_flow');
    const { flow } = opened;
    try {
      const { identity, account } = await this.profileFromCallback(search, flow);
      if (flow.linkUserId !== null) {
        if (flow.cliRedirect !== null) {
          await this.requireLinkable(flow.linkUserId, identity);
          return { location: await this.issueCliCode(flow, flow.linkUserId, identity), signedIn: null };
        }
        await this.link(flow.linkUserId, identity);
        return { location: `${this.config.appUrl}${flow.redirect ?? ''}`, signedIn: null };
      }
      const user = await this.findOrCreateUser(identity, account);
      if (flow.cliRedirect !== null) return { location: await this.issueCliCode(flow, user.id, null), signedIn: null };
      const signedIn = await this.signIn(user);
      return { location: `${this.config.appUrl}${flow.redirect ?? ''}`, signedIn };
    } catch (error) {
      if (error instanceof SignInFailure) return this.failure(flow.cliRedirect, error.code);
      if (error instanceof AccountDeactivated) return this.failure(flow.cliRedirect, 'account_deactivated');
      this.log.error('identity provider sign-in failed', { error });
      return this.failure(flow.cliRedirect, 'server_error');
    }
  }

  /**
   * Redeems a command-line code once, for the loopback redirect it was issued to and only with the verifier
   * of the challenge its flow started with: a new 1-day session. Any failed attempt uses the code up.
   */
  async exchangeCliCode(code: string, redirectUri: string, codeVerifier: string | undefined): Promise<SignedIn> {
    const issued = await this.redeemCliCode(code, redirectUri, codeVerifier);
    if (issued.link !== null) throw invalidCliCode();
    const user = await this.users.findUserById(issued.userId);
    if (!user) throw invalidCliCode();
    return this.signIn(user);
  }

  /**
   * Redeems a command-line link code, like `exchangeCliCode`, for the account that started the link only:
   * links its provider identity to `userId`. 409 IDENTITY_IN_USE when another account took it meanwhile.
   */
  async linkWithCliCode(userId: string, code: string, redirectUri: string, codeVerifier: string | undefined): Promise<void> {
    const issued = await this.redeemCliCode(code, redirectUri, codeVerifier);
    if (issued.link === null || issued.userId !== userId) throw invalidCliCode();
    const owner = await this.repository.linkExisting(issued.link.issuer, issued.link.subject, userId);
    if (owner !== userId) {
      throw new DomainError('IDENTITY_IN_USE', 'This identity-provider account is already linked to another account');
    }
  }

  /** Uses the code up, then checks it: its redirect, and the verifier of its challenge. */
  private async redeemCliCode(code: string, redirectUri: string, codeVerifier: string | undefined): Promise<{ userId: string; link: Identity | null }> {
    const issued = await this.repository.consumeCliCode(hashToken(code));
    if (!issued || issued.redirectUri !== redirectUri || !verifierMatches(issued.codeChallenge, codeVerifier)) throw invalidCliCode();
    const link = issued.linkIssuer !== null && issued.linkSubject !== null ? { issuer: issued.linkIssuer, subject: issued.linkSubject } : null;
    return { userId: issued.userId, link };
  }

  /** A one-time code for the command line's loopback listener, redeemable only with its verifier; the landing. */
  private async issueCliCode(flow: IdpFlow, userId: string, link: Identity | null): Promise<string> {
    // The route requires a challenge for every command-line flow: a flow without one was not made here.
    if (flow.cliRedirect === null || flow.codeChallenge === null) throw new SignInFailure('invalid_state');
    const code = randomToken();
    await this.repository.insertCliCode(
      { hash: hashToken(code), userId, redirectUri: flow.cliRedirect, codeChallenge: flow.codeChallenge, link },
      CLI_CODE_SECONDS,
    );
    return withParam(flow.cliRedirect, 'code', code);
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
    return {
      identity: { issuer: configuration.serverMetadata().issuer, subject: String(claims.sub) },
      account: email.success ? { email: email.data, emailVerified: claims.email_verified === true, name: displayName(claims, email.data) } : null,
    };
  }

  /**
   * The account linked to the subject; else a new one with the provider's email. An existing account with
   * that email is never taken over (whoever registered the address first may not own it): account_exists,
   * and its owner links the provider explicitly while signed in.
   */
  private async findOrCreateUser(identity: Identity, account: ProviderProfile['account']): Promise<UserRow> {
    const linked = await this.repository.findLinkedUser(identity.issuer, identity.subject);
    if (linked) return linked;
    if (account === null) throw new SignInFailure('email_missing');
    if (await this.users.findUserByEmail(account.email)) throw new SignInFailure('account_exists');
    try {
      return await this.sql.begin(async (tx) => {
        const user = await this.auth.createIdpUser(tx, account);
        await this.repository.linkNew(tx, identity.issuer, identity.subject, user.id);
        return user;
      });
    } catch (error) {
      // The email was registered a moment ago (or this subject signed in twice at once).
      if (error instanceof DomainError && error.code === 'EMAIL_TAKEN') throw new SignInFailure('account_exists');
      throw error;
    }
  }

  /** Links the subject to the account that asked, whatever the provider's email; a subject has one account. */
  private async link(userId: string, identity: Identity): Promise<void> {
    const owner = await this.repository.linkExisting(identity.issuer, identity.subject, userId);
    // The account that asked was deleted meanwhile: its request lapsed with it.
    if (owner === null) throw new SignInFailure('expired_flow');
    if (owner !== userId) throw new SignInFailure('identity_in_use');
  }

  /** Before a command line is handed a link code: the subject is free, or already this account's. */
  private async requireLinkable(userId: string, identity: Identity): Promise<void> {
    const owner = await this.repository.findLinkedUser(identity.issuer, identity.subject);
    if (owner !== null && owner.id !== userId) throw new SignInFailure('identity_in_use');
  }

  private failure(cliRedirect: string | null, code: IdpError): CallbackOutcome {
    return { location: this.failureLocation(cliRedirect, code), signedIn: null };
  }

  private failureLocation(cliRedirect: string | null, code: IdpError): string {
    return withParam(cliRedirect ?? this.config.appUrl, 'authError', code);
  }

  private callbackUrl(): string {
    return `${this.config.publicUrl}${ROUTES.idpCallback.path}`;
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

/** A flow made by `handOff`: a command-line link, which links nothing until the command line redeems its code. */
const isHandOff = (flow: IdpFlow): boolean => flow.linkUserId !== null && flow.cliRedirect !== null && flow.codeChallenge !== null;

function newFlow(target: FlowRequest): IdpFlow {
  return {
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
    codeVerifier: oidc.randomPKCECodeVerifier(),
    ...target,
    expiresAt: Date.now() + FLOW_SECONDS * 1000,
  };
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
