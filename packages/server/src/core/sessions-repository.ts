import type { Role, TokenScope } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from './database.js';
import { SQL } from './di.js';

/** Carries the id of each revoked session, so every instance drops it from its cache and closes its event sockets (4401). */
export const SESSIONS_CHANNEL = 'bandcollab_sessions';

/** What a personal access token grants: at most its owner's current rights, and only this much of them. */
export interface TokenGrant {
  tokenId: string;
  /** Its owner's name for it: events of its actions carry it (`actor.token`). */
  tokenName: string;
  /** `read`: GET, HEAD and the events stream only (the AuthGuard refuses the rest). */
  scope: TokenScope;
  /** null: every project of its owner; otherwise the only projects that exist for it. */
  projectIds: string[] | null;
  expiresAt: Date;
}

export interface Identity {
  userId: string;
  name: string;
  email: string;
  role: Role;
  /** A one-time password set by the reset-password command must be changed before anything else. */
  passwordChangeRequired: boolean;
}

/**
 * The identity of an authenticated request: its user, and what it authenticated with: a session's access
 * token (all the user's rights) or a personal access token (`token`: its scope and project limits).
 */
export type Principal = SessionPrincipal | TokenPrincipal;
export type SessionPrincipal = Identity & { sessionId: string; token: null };
export type TokenPrincipal = Identity & { sessionId: null; token: TokenGrant };

/** The sessions every authenticated request is checked against (the AuthGuard, through the SessionCache). */
@injectable()
export class SessionsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Every revocation (logout, refresh-token reuse) passes here, so every instance closes the session's event
   * sockets: the signal goes out in the revoking transaction, when and only if it commits.
   */
  async revoke(sessionId: string): Promise<boolean> {
    return this.sql.begin(async (tx) => {
      const rows = await tx`
        update sessions set revoked_at = now() where id = ${sessionId} and revoked_at is null returning id`;
      if (rows.length === 0) return false;
      await tx`select pg_notify(${SESSIONS_CHANNEL}, ${sessionId})`;
      return true;
    });
  }

  /**
   * Revokes every active session of `userId` except `keep` (a password change keeps the caller's), within
   * `tx`: each one is announced on the sessions channel when and only if `tx` commits.
   */
  async revokeAllOfUser(tx: Queryable, userId: string, keep: string | null = null): Promise<void> {
    await tx`
      with revoked as (
        update sessions set revoked_at = now()
        where user_id = ${userId} and revoked_at is null ${keep === null ? tx`` : tx`and id <> ${keep}`}
        returning id
      )
      select pg_notify(${SESSIONS_CHANNEL}, id::text) from revoked`;
  }

  /**
   * Revokes the user's active sessions beyond the `keep` newest, within `tx` (announced as revokeAllOfUser
   * does); answers their ids. Takes the user's row lock first, so logins at once cannot each leave one over.
   */
  async revokeAllButNewest(tx: Queryable, userId: string, keep: number): Promise<string[]> {
    await tx`select 1 from users where id = ${userId} for no key update`;
    const rows = await tx<{ id: string }[]>`
      with revoked as (
        update sessions set revoked_at = now()
        where id in (
          select id from sessions
          where user_id = ${userId} and revoked_at is null and expires_at > now()
          order by created_at desc, id desc
          offset ${keep}
        )
        returning id
      )
      select id, pg_notify(${SESSIONS_CHANNEL}, id::text) from revoked`;
    return rows.map((row) => row.id);
  }

  /** The principal of an access token and its session's expiry, only while the session is active and its user exists. */
  async findActive(userId: string, sessionId: string): Promise<{ principal: Principal; expiresAt: Date } | null> {
    const [row] = await this.sql<(Identity & { sessionId: string; expiresAt: Date })[]>`
      select u.id as user_id, s.id as session_id, u.name, u.email, u.role, u.password_change_required, s.expires_at
      from sessions s join users u on u.id = s.user_id
      where s.id = ${sessionId} and u.id = ${userId} and s.revoked_at is null and s.expires_at > now()`;
    if (!row) return null;
    const { expiresAt, ...principal } = row;
    return { principal: { ...principal, token: null }, expiresAt };
  }
}
