import type postgres from 'postgres';
import { inject, Lifecycle, scoped } from 'tsyringe';
import type { Clock } from './clock.js';
import type { Queryable, Sql } from './database.js';
import { CLOCK, SQL } from './di.js';
import { type Principal, SESSIONS_CHANNEL, SessionsRepository } from './sessions-repository.js';

/** Carries the id of each user whose name, email, role or required password change changed or who was deleted (migrations 010, 012). */
export const USERS_CHANNEL = 'bandcollab_users';

/** Bounds the memory: beyond this many sessions the least recently loaded one is dropped (and read again when used). */
const MAX_SESSIONS = 10_000;

interface CachedSession {
  principal: Principal;
  /** Fixed at login: a session past it is over without any notice. */
  expiresAt: number;
}

/**
 * The principals of active sessions, kept in memory so that an authenticated request costs no session
 * query. What would make one stale is announced by PostgreSQL to every instance: a revoked session on the
 * sessions channel (SessionsRepository.revoke), a user's changed name, email, role or required password
 * change, or their deletion, on the users channel (a trigger, whichever process makes the change). An instance drops the entry when
 * the notice arrives, so it accepts a revoked session at most for the notify round trip; its own
 * revocations are dropped at once. Entries are kept only while both channels are listened to; when the
 * LISTEN connection comes back after a drop, notices may have been missed, so everything is dropped.
 * One instance per server (container-scoped): every AuthGuard of a server shares it.
 */
@scoped(Lifecycle.ContainerScoped)
export class SessionCache {
  private readonly sessions = new Map<string, CachedSession>();
  private listeners: postgres.ListenMeta[] = [];
  private listening = false;
  /** Counts drops; a lookup that overlapped one does not store what it read, which may predate it. */
  private drops = 0;

  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(SessionsRepository) private readonly repository: SessionsRepository,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  async start(): Promise<void> {
    this.listeners = await Promise.all([
      this.sql.listen(SESSIONS_CHANNEL, (sessionId) => this.dropSession(sessionId), () => this.listened()),
      this.sql.listen(USERS_CHANNEL, (userId) => this.dropUser(userId), () => this.listened()),
    ]);
    this.listening = true;
  }

  async stop(): Promise<void> {
    this.listening = false;
    this.dropAll();
    await Promise.all(this.listeners.map((listener) => listener.unlisten()));
  }

  /** The principal of an access token, only while its session is active and its user exists. */
  async principal(userId: string, sessionId: string): Promise<Principal | null> {
    const cached = this.sessions.get(sessionId);
    if (cached && cached.principal.userId === userId && cached.expiresAt > this.clock.now()) return cached.principal;
    const dropsBefore = this.drops;
    const found = await this.repository.findActive(userId, sessionId);
    if (!found) {
      this.sessions.delete(sessionId);
      return null;
    }
    if (this.listening && this.drops === dropsBefore) this.remember(sessionId, { principal: found.principal, expiresAt: found.expiresAt.getTime() });
    return found.principal;
  }

  /** Revokes a session: every instance drops it when the notice arrives, this one at once. */
  async revoke(sessionId: string): Promise<boolean> {
    const revoked = await this.repository.revoke(sessionId);
    this.dropSession(sessionId);
    return revoked;
  }

  /**
   * Revokes every session of `userId` but `keep` within `tx` (see SessionsRepository.revokeAllOfUser); this
   * instance forgets them at once, the others when the notices arrive after the commit.
   */
  async revokeAllOfUser(tx: Queryable, userId: string, keep: string | null = null): Promise<void> {
    await this.repository.revokeAllOfUser(tx, userId, keep);
    this.dropUser(userId);
  }

  /** Revokes the user's active sessions beyond the `keep` newest within `tx`; this instance forgets them at once. */
  async revokeAllButNewest(tx: Queryable, userId: string, keep: number): Promise<void> {
    for (const sessionId of await this.repository.revokeAllButNewest(tx, userId, keep)) this.dropSession(sessionId);
  }

  private remember(sessionId: string, session: CachedSession): void {
    this.sessions.delete(sessionId);
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(sessionId, session);
  }

  private dropSession(sessionId: string): void {
    this.drops += 1;
    this.sessions.delete(sessionId);
  }

  private dropUser(userId: string): void {
    this.drops += 1;
    for (const [sessionId, session] of this.sessions) {
      if (session.principal.userId === userId) this.sessions.delete(sessionId);
    }
  }

  private dropAll(): void {
    this.drops += 1;
    this.sessions.clear();
  }

  /** Called each time a LISTEN starts: after a dropped connection came back, notices may have been lost. */
  private listened(): void {
    this.dropAll();
  }
}
