import { inject, injectable } from 'tsyringe';
import type { Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

/** A counted attempt, or how long until the window frees one. */
export type Reservation = { id: string } | { retryAfterSeconds: number };

// Two-key advisory locks (their own key space, apart from the one-key locks elsewhere): one per client address,
// so two attempts from one address are counted one after the other, on every server instance.
const LOGIN_LOCK_CLASS = 0x6c6f6731; // "log1"
const REGISTRATION_LOCK_CLASS = 0x72656732; // "reg2"

/**
 * The abuse-limit records. A login attempt is written before its password is checked and stays as a failure
 * unless the password proves right, when it becomes a success; a registration attempt is written before its
 * password is hashed. Counting and writing happen under the address's lock, so parallel attempts from one
 * address cannot pass the limits together. The window is measured from clock_timestamp(), not now(): now() is
 * when the transaction began, before the lock was granted and before the attempts it waited for were written,
 * and a Retry-After counted from it could exceed the window.
 */
@injectable()
export class LimitsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Counts a login attempt unless, within the window, `failuresPerEmail` failures at `email` or
   * `failuresPerAddress` at any email came from `clientIp`, or `successesPerAccount` successful logins to
   * `email` from anywhere, or `successesPerAddress` from `clientIp` to any account. The attempt that must leave
   * the window to free one is the limit-th newest; the latest of those frees them all. Successes to `email` from
   * other addresses are counted under this address's lock only: logins in flight from several addresses at
   * once may pass that limit together, by at most their number.
   */
  async reserveLogin(
    email: string,
    clientIp: string,
    limits: { failuresPerEmail: number; failuresPerAddress: number; successesPerAccount: number; successesPerAddress: number; windowSeconds: number },
  ): Promise<Reservation> {
    return this.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${LOGIN_LOCK_CLASS}, hashtext(${clientIp}))`;
      const [row] = await tx<{ id: string | null; retryAfterSeconds: number | null }[]>`
        with window_start as (
          select clock_timestamp() - make_interval(secs => ${limits.windowSeconds}) as at
        ), failures as (
          select email, failed_at from login_failures
          where client_ip = ${clientIp} and failed_at > (select at from window_start)
        ), blocking as (
          select max(at) as at from (
            (select failed_at as at from failures where email = ${email} order by failed_at desc offset ${limits.failuresPerEmail - 1} limit 1)
            union all
            (select failed_at from failures order by failed_at desc offset ${limits.failuresPerAddress - 1} limit 1)
            union all
            (select succeeded_at from login_successes where email = ${email} and succeeded_at > (select at from window_start)
             order by succeeded_at desc offset ${limits.successesPerAccount - 1} limit 1)
            union all
            (select succeeded_at from login_successes where client_ip = ${clientIp} and succeeded_at > (select at from window_start)
             order by succeeded_at desc offset ${limits.successesPerAddress - 1} limit 1)
          ) limiting
        ), inserted as (
          insert into login_failures (email, client_ip)
          select ${email}, ${clientIp} from blocking where at is null
          returning id
        )
        select (select id::text from inserted) as id,
               ceil(extract(epoch from at + make_interval(secs => ${limits.windowSeconds}) - clock_timestamp()))::int as retry_after_seconds
        from blocking`;
      return row!.id !== null ? { id: row!.id } : { retryAfterSeconds: Math.max(1, row!.retryAfterSeconds ?? 1) };
    });
  }


  /**
   * Records a successful login of `email` from `clientIp`; its attempt and the earlier failures of that email
   * from that address are forgotten.
   */
  async recordLoginSuccess(email: string, clientIp: string): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`delete from login_failures where email = ${email} and client_ip = ${clientIp}`;
      await tx`insert into login_successes (email, client_ip) values (${email}, ${clientIp})`;
    });
  }

  /** Counts a registration attempt unless `perAddress` came from `clientIp` within the window. */
  async reserveRegistration(clientIp: string, limits: { perAddress: number; windowSeconds: number }): Promise<Reservation> {
    return this.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${REGISTRATION_LOCK_CLASS}, hashtext(${clientIp}))`;
      const [row] = await tx<{ id: string | null; retryAfterSeconds: number | null }[]>`
        with blocking as (
          select max(attempted_at) as attempted_at from (
            select attempted_at from registration_attempts
            where client_ip = ${clientIp} and attempted_at > clock_timestamp() - make_interval(secs => ${limits.windowSeconds})
            order by attempted_at desc offset ${limits.perAddress - 1} limit 1
          ) limiting
        ), inserted as (
          insert into registration_attempts (client_ip)
          select ${clientIp} from blocking where attempted_at is null
          returning id
        )
        select (select id::text from inserted) as id,
               ceil(extract(epoch from attempted_at + make_interval(secs => ${limits.windowSeconds}) - clock_timestamp()))::int as retry_after_seconds
        from blocking`;
      return row!.id !== null ? { id: row!.id } : { retryAfterSeconds: Math.max(1, row!.retryAfterSeconds ?? 1) };
    });
  }

  async signedInRecentlyFrom(userId: string, network: string, days: number): Promise<boolean> {
    const [row] = await this.sql`
      select 1 from sign_in_networks
      where user_id = ${userId} and network = ${network} and signed_in_at > now() - make_interval(days => ${days})`;
    return row !== undefined;
  }

  async recordSignIn(userId: string, network: string): Promise<void> {
    await this.sql`
      insert into sign_in_networks (user_id, network) values (${userId}, ${network})
      on conflict (user_id, network) do update set signed_in_at = now()`;
  }
}
