import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

const RESET_REQUEST_LOCK_CLASS = 0x72737431; // "rst1"

/** The reset links (their tokens' hashes) and the requests for them, counted per email and per address. */
@injectable()
export class PasswordResetRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Counts a request for `email` from `clientIp` unless `limit` came for that email or from that address within
   * `windowSeconds`, in `tx` under the address's lock; the seconds until one leaves the window otherwise.
   */
  async reserveRequest(tx: Queryable, email: string, clientIp: string, limit: number, windowSeconds: number): Promise<number | null> {
    await tx`select pg_advisory_xact_lock(${RESET_REQUEST_LOCK_CLASS}, hashtext(${clientIp}))`;
    const [counts] = await tx<{ byEmail: number; byAddress: number; oldestSeconds: number | null }[]>`
      with recent as (
        select email, client_ip, requested_at from password_reset_requests
        where (email = ${email} or client_ip = ${clientIp}) and requested_at > clock_timestamp() - make_interval(secs => ${windowSeconds})
      )
      select count(*) filter (where email = ${email})::int as by_email,
             count(*) filter (where client_ip = ${clientIp})::int as by_address,
             extract(epoch from min(requested_at) + make_interval(secs => ${windowSeconds}) - clock_timestamp())::float8 as oldest_seconds
      from recent`;
    if (counts!.byEmail >= limit || counts!.byAddress >= limit) return Math.max(1, Math.ceil(counts!.oldestSeconds ?? 1));
    await tx`insert into password_reset_requests (email, client_ip) values (${email}, ${clientIp})`;
    await tx`delete from password_reset_requests where requested_at < clock_timestamp() - make_interval(secs => ${windowSeconds})`;
    return null;
  }

  async insert(userId: string, tokenHash: string, expiresAt: Date): Promise<void> {
    await this.sql`insert into password_resets (token_hash, user_id, expires_at) values (${tokenHash}, ${userId}, ${expiresAt})`;
    await this.sql`delete from password_resets where expires_at < now() - interval '1 day'`;
  }

  /** Uses up a live link in `tx`: its user, or null when it is unknown, used or expired. */
  async use(tx: Queryable, tokenHash: string): Promise<string | null> {
    const [row] = await tx<{ userId: string }[]>`
      update password_resets set used_at = now()
      where token_hash = ${tokenHash} and used_at is null and expires_at > now()
      returning user_id`;
    return row?.userId ?? null;
  }

  /** The account's other links stop working once one is used. */
  async dropAllOf(tx: Queryable, userId: string): Promise<void> {
    await tx`delete from password_resets where user_id = ${userId} and used_at is null`;
  }

  /** Whether the account may sign in (a site ADMIN did not deactivate it). */
  async isActive(userId: string): Promise<boolean> {
    const rows = await this.sql`select 1 from users where id = ${userId} and deactivated_at is null`;
    return rows.length > 0;
  }

  async hasIdentity(userId: string): Promise<boolean> {
    const rows = await this.sql`select 1 from identities where user_id = ${userId} limit 1`;
    return rows.length > 0;
  }
}
