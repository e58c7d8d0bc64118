import type { Me, Role } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { avatarUrl } from '../images/repository.js';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  passwordHash: string | null;
  /** The stored avatar's name under DATA_DIR/images (`<uuid>.<ext>`). */
  avatar: string | null;
  avatarSha256: string | null;
  passwordChangeRequired: boolean;
  createdAt: Date;
}

export interface SessionRow {
  id: string;
  userId: string;
  rememberMe: boolean;
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface RefreshTokenRow {
  tokenHash: string;
  sessionId: string;
  rotatedAt: Date | null;
}

export const toMe = (row: UserRow): Me => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role,
  avatarUrl: avatarUrl(row.avatar),
  createdAt: row.createdAt.toISOString(),
});

// Serialises registrations so "first account is ADMIN" holds under concurrency.
const REGISTRATION_LOCK_KEY = 0x72656731; // "reg1"

@injectable()
export class AuthRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  async lockRegistrations(tx: Queryable): Promise<void> {
    await tx`select pg_advisory_xact_lock(${REGISTRATION_LOCK_KEY})`;
  }

  async insertUser(
    tx: Queryable,
    user: { email: string; name: string; passwordHash: string | null },
  ): Promise<UserRow | null> {
    const [row] = await tx<UserRow[]>`
      insert into users (email, name, password_hash, role)
      values (${user.email}, ${user.name}, ${user.passwordHash},
              case when exists (select 1 from users) then 'MEMBER' else 'ADMIN' end)
      on conflict (email) do nothing
      returning *`;
    return row ?? null;
  }

  async findUserByEmail(email: string): Promise<UserRow | null> {
    const [row] = await this.sql<UserRow[]>`select * from users where email = ${email}`;
    return row ?? null;
  }

  async findUserById(id: string): Promise<UserRow | null> {
    const [row] = await this.sql<UserRow[]>`select * from users where id = ${id}`;
    return row ?? null;
  }

  /**
   * Sets a password hash; `changeRequired` marks it one-time (reset-password). It lives with the other
   * credentials so that a reset (auth) and a change by the owner (accounts) share it, accounts depending on auth.
   */
  async setPassword(tx: Queryable, userId: string, passwordHash: string, changeRequired: boolean): Promise<void> {
    await tx`update users set password_hash = ${passwordHash}, password_change_required = ${changeRequired} where id = ${userId}`;
  }

  async setRole(email: string, role: Role): Promise<UserRow | null> {
    const [row] = await this.sql<UserRow[]>`update users set role = ${role} where email = ${email} returning *`;
    return row ?? null;
  }

  /**
   * Takes the user's row lock and answers whether the account may sign in (exists and is not deactivated). A
   * deactivation waits for the lock, so it then ends the session this transaction starts; one that went first
   * is seen here.
   */
  async lockActiveUser(tx: Queryable, userId: string): Promise<boolean> {
    const [row] = await tx<{ deactivatedAt: Date | null }[]>`select deactivated_at from users where id = ${userId} for no key update`;
    return row !== undefined && row.deactivatedAt === null;
  }

  async insertSession(tx: Queryable, userId: string, rememberMe: boolean, lifetimeSeconds: number): Promise<SessionRow> {
    const [row] = await tx<SessionRow[]>`
      insert into sessions (user_id, remember_me, expires_at)
      values (${userId}, ${rememberMe}, now() + make_interval(secs => ${lifetimeSeconds}))
      returning *`;
    return row!;
  }

  async insertRefreshToken(tx: Queryable, sessionId: string, tokenHash: string): Promise<void> {
    await tx`insert into refresh_tokens (token_hash, session_id) values (${tokenHash}, ${sessionId})`;
  }

  async findRefreshToken(tokenHash: string): Promise<(RefreshTokenRow & { session: SessionRow }) | null> {
    const [row] = await this.sql<(RefreshTokenRow & Omit<SessionRow, 'id'>)[]>`
      select t.token_hash, t.session_id, t.rotated_at, s.user_id, s.remember_me, s.expires_at, s.revoked_at
      from refresh_tokens t join sessions s on s.id = t.session_id
      where t.token_hash = ${tokenHash}`;
    if (!row) return null;
    const { tokenHash: hash, sessionId, rotatedAt, ...session } = row;
    return { tokenHash: hash, sessionId, rotatedAt, session: { id: sessionId, ...session } };
  }

  /** Marks the token rotated; false when another request rotated it first. */
  async markRotated(tx: Queryable, tokenHash: string): Promise<boolean> {
    const rows = await tx`
      update refresh_tokens set rotated_at = now() where token_hash = ${tokenHash} and rotated_at is null
      returning token_hash`;
    return rows.length === 1;
  }
}
