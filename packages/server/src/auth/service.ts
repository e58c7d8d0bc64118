import { isUuid, type Me, type TokenPair, type User } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { AccountDeactivated, DomainError, notFound } from '../core/errors.js';
import { EventPublisher } from '../events/publisher.js';
import { InvitationsService } from '../invitations/service.js';
import { ProjectsRepository } from '../projects/repository.js';
import { networkOf } from '../core/networks.js';
import { AbuseLimits } from './limits.js';
import { Passwords } from './passwords.js';
import { AuthRepository, type SessionRow, toMe, type UserRow } from './repository.js';
import { Metrics } from '../core/metrics.js';
import { SessionCache } from '../core/session-cache.js';
import { AccessTokens, hashToken, randomToken } from '../core/tokens.js';

const DAY = 86_400;
const SESSION_SECONDS = DAY;
const REMEMBERED_SESSION_SECONDS = 30 * DAY;
/** Active sessions a user keeps; a new one past it ends the oldest. */
export const MAX_SESSIONS_PER_USER = 50;

/** What the routes need to set the cookies of a new token pair. */
export interface IssuedTokens {
  pair: TokenPair;
  session: SessionRow;
}

/** A new session's tokens and the user they were issued to. */
export interface SignedIn extends IssuedTokens {
  user: User;
}

const emailTaken = () => new DomainError('EMAIL_TAKEN', 'An account with this email already exists');

const invalidRefreshToken = () =>
  new DomainError('INVALID_REFRESH_TOKEN', 'The refresh token is unknown, expired or revoked; log in again');

@injectable()
export class AuthService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(AuthRepository) private readonly repository: AuthRepository,
    @inject(ProjectsRepository) private readonly projects: ProjectsRepository,
    @inject(Passwords) private readonly passwords: Passwords,
    @inject(AbuseLimits) private readonly limits: AbuseLimits,
    @inject(AccessTokens) private readonly accessTokens: AccessTokens,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(InvitationsService) private readonly invitations: InvitationsService,
    @inject(SessionCache) private readonly sessions: SessionCache,
    @inject(Metrics) private readonly metrics: Metrics,
  ) {}

  /**
   * Registering joins nothing by itself. With `inviteToken` the new account accepts that invitation in the
   * same transaction: an invitation it may not accept (another email, unknown link) creates nothing.
   */
  async register(input: { email: string; password: string; name: string; inviteToken?: string | undefined }, clientIp: string): Promise<SignedIn> {
    const network = networkOf(clientIp);
    const passwordHash = await this.limits.registration(clientIp, async () => {
      // A taken email is answered without hashing (the 409 says it is taken anyway): a flood of them costs no
      // hash. The insert below still decides, for two registrations of one new email at once.
      if (await this.repository.findUserByEmail(input.email)) throw emailTaken();
      return this.passwords.hash(input.password, { network });
    });
    const registered = await this.sql.begin(async (tx) => {
      const user = await this.createUser(tx, { email: input.email, name: input.name, passwordHash });
      if (input.inviteToken !== undefined) await this.invitations.acceptAs(tx, user, input.inviteToken);
      return signedIn(user, await this.startSession(tx, user.id, false));
    });
    await this.limits.recordSignIn(registered.user.id, network);
    return registered;
  }

  /**
   * Creates an account for an identity-provider sign-in (no password). Its email's invitations are redeemed
   * only when the provider vouches for the email: anyone can claim an address at a provider that does not.
   */
  async createIdpUser(tx: Queryable, profile: { email: string; name: string; emailVerified: boolean }): Promise<UserRow> {
    const user = await this.createUser(tx, { email: profile.email, name: profile.name, passwordHash: null });
    if (profile.emailVerified) await this.redeemInvitations(tx, user);
    return user;
  }

  /**
   * Every attempt is counted first (AbuseLimits). An unknown email, or an account without a password, is
   * answered from the cheap path (Passwords.answerWithoutHash): no hash on the shared queue, the same time and
   * refusals. A known account's check takes the reserved lane when the login presents a live refresh token of
   * that account (the `refresh_token` cookie) or comes from a network it signed in from within 30 days; else
   * the open lane, keyed by the client's network.
   */
  async login(
    input: { email: string; password: string; rememberMe: boolean },
    clientIp: string,
    refreshToken: string | undefined,
  ): Promise<SignedIn> {
    const network = networkOf(clientIp);
    const user = await this.limits.login(input.email, clientIp, async () => {
      const found = await this.repository.findUserByEmail(input.email);
      if (!found?.passwordHash) return this.passwords.answerWithoutHash(network).then(() => null);
      const asker = (await this.vouchedFor(found.id, network, refreshToken)) ? { account: found.id } : { network };
      return (await this.passwords.verify(found.passwordHash, input.password, asker)) ? found : null;
    });
    if (!user) {
      this.metrics.loginFailures.inc();
      throw new DomainError('INVALID_CREDENTIALS', 'The email or password is wrong');
    }
    const issued = signedIn(user, await this.sql.begin((tx) => this.startSession(tx, user.id, input.rememberMe)));
    await this.limits.recordSignIn(user.id, network);
    return issued;
  }

  /** A live refresh token of `userId`, or a sign-in of it from `network` within 30 days. */
  private async vouchedFor(userId: string, network: string, refreshToken: string | undefined): Promise<boolean> {
    if (refreshToken) {
      const found = await this.repository.findRefreshToken(hashToken(refreshToken));
      const session = found?.session;
      if (session && found.rotatedAt === null && session.userId === userId && session.revokedAt === null && session.expiresAt.getTime() > Date.now()) return true;
    }
    return this.limits.signedInRecentlyFrom(userId, network);
  }

  /**
   * A new session for a user already identified (password login, identity provider, CLI code). Past
   * MAX_SESSIONS_PER_USER active sessions the oldest end: a script that logs in on every run must not pile up
   * sessions (each checked and cached) without bound. A deactivated account gets 403 FORBIDDEN (AccountDeactivated).
   */
  async startSession(tx: Queryable, userId: string, rememberMe: boolean): Promise<IssuedTokens> {
    if (!(await this.repository.lockActiveUser(tx, userId))) {
      throw new AccountDeactivated();
    }
    const session = await this.repository.insertSession(
      tx,
      userId,
      rememberMe,
      rememberMe ? REMEMBERED_SESSION_SECONDS : SESSION_SECONDS,
    );
    await this.sessions.revokeAllButNewest(tx, userId, MAX_SESSIONS_PER_USER);
    const refreshToken = randomToken();
    await this.repository.insertRefreshToken(tx, session.id, hashToken(refreshToken));
    return { session, pair: this.pair(userId, session.id, refreshToken) };
  }

  /** Rotates the refresh token; the session keeps its expiry. A rotated token seen again revokes the session. */
  async refresh(refreshToken: string): Promise<IssuedTokens> {
    const tokenHash = hashToken(refreshToken);
    const found = await this.repository.findRefreshToken(tokenHash);
    if (!found) throw invalidRefreshToken();
    const { session } = found;
    if (session.revokedAt !== null || session.expiresAt.getTime() <= Date.now()) throw invalidRefreshToken();
    if (found.rotatedAt !== null) {
      await this.sessions.revoke(session.id);
      throw invalidRefreshToken();
    }
    const next = randomToken();
    const rotated = await this.sql.begin(async (tx) => {
      if (!(await this.repository.markRotated(tx, tokenHash))) return false;
      await this.repository.insertRefreshToken(tx, session.id, hashToken(next));
      return true;
    });
    if (!rotated) {
      // Another request rotated this token a moment ago: the same reuse, seen from the other side.
      await this.sessions.revoke(session.id);
      throw invalidRefreshToken();
    }
    return { session, pair: this.pair(session.userId, session.id, next) };
  }

  /** Revokes the session named by a refresh token, else by an access token (even an expired one). */
  async logout(refreshToken: string | undefined, accessToken: string | undefined): Promise<void> {
    let sessionId: string | null = null;
    if (refreshToken) {
      sessionId = (await this.repository.findRefreshToken(hashToken(refreshToken)))?.sessionId ?? null;
    } else if (accessToken) {
      try {
        sessionId = this.accessTokens.verify(accessToken, { ignoreExpiration: true }).sid;
      } catch {
        sessionId = null;
      }
    }
    if (isUuid(sessionId)) await this.sessions.revoke(sessionId);
  }

  async me(userId: string): Promise<Me> {
    const user = await this.repository.findUserById(userId);
    if (!user) throw notFound('User');
    return toMe(user);
  }

  /** Inserts the account; the first one is the site ADMIN, so registrations take turns. */
  private async createUser(tx: Queryable, input: { email: string; name: string; passwordHash: string | null }): Promise<UserRow> {
    await this.repository.lockRegistrations(tx);
    const user = await this.repository.insertUser(tx, input);
    if (!user) throw emailTaken();
    return user;
  }

  /** The email's pending invitations become memberships, and each project's members hear of it (member.added). */
  private async redeemInvitations(tx: Queryable, user: UserRow): Promise<void> {
    for (const projectId of await this.projects.redeemInvitations(tx, user.id, user.email)) {
      const member = (await this.projects.findMember(tx, projectId, user.id))!;
      await this.events.publish(tx, { type: 'member.added', projectId, actor: { id: user.id, name: user.name }, data: { member } });
    }
  }

  private pair(userId: string, sessionId: string, refreshToken: string): TokenPair {
    return {
      accessToken: this.accessTokens.sign({ sub: userId, sid: sessionId }),
      refreshToken,
      expiresIn: this.accessTokens.ttlSeconds,
    };
  }
}

const publicUser = (row: UserRow): User => ({ id: row.id, email: row.email, name: row.name, role: row.role });

export const signedIn = (user: UserRow, issued: IssuedTokens): SignedIn => ({ ...issued, user: publicUser(user) });
