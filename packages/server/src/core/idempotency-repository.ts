import { inject, injectable } from 'tsyringe';
import type { Sql } from './database.js';
import { SQL } from './di.js';

/** A key already taken: by a request still running (`status` null) or with the first answer, encrypted. */
export interface TakenKey {
  fingerprint: string;
  status: number | null;
  answer: Buffer | null;
}

export interface KeyClaim {
  userId: string;
  keyHash: string;
  fingerprint: string;
  now: Date;
  /** A row created before this is expired: a claim takes it over, as if it had been purged. */
  expiredBefore: Date;
}

/** The rows of Idempotency-Key (migration 025): a claim while the request runs, then its answer. */
@injectable()
export class IdempotencyRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Takes the key for this request (true), or answers who holds it. One statement: of two instances claiming
   * the same key at once, the primary key lets exactly one in.
   */
  async claim(claim: KeyClaim): Promise<true | TakenKey | null> {
    const inserted = await this.sql`
      insert into idempotency_keys (user_id, key_hash, fingerprint, created_at)
      values (${claim.userId}, ${claim.keyHash}, ${claim.fingerprint}, ${claim.now})
      on conflict (user_id, key_hash) do update
        set fingerprint = excluded.fingerprint, status = null, answer = null, created_at = excluded.created_at
        where idempotency_keys.created_at < ${claim.expiredBefore}
      returning 1`;
    if (inserted.length > 0) return true;
    const [taken] = await this.sql<TakenKey[]>`
      select fingerprint, status, answer from idempotency_keys where user_id = ${claim.userId} and key_hash = ${claim.keyHash}`;
    // Gone between the two statements (its request failed and released it): the caller treats it as running.
    return taken ?? null;
  }

  /** Keeps the answer of the request that holds the key. */
  async complete(userId: string, keyHash: string, status: number, answer: Buffer): Promise<void> {
    await this.sql`
      update idempotency_keys set status = ${status}, answer = ${answer}
      where user_id = ${userId} and key_hash = ${keyHash} and status is null`;
  }

  /** Frees the key of a request that ended without an answer to keep (5xx, connection lost): a retry runs again. */
  async release(userId: string, keyHash: string): Promise<void> {
    await this.sql`delete from idempotency_keys where user_id = ${userId} and key_hash = ${keyHash} and status is null`;
  }

  async deleteCreatedBefore(cutoff: Date): Promise<number> {
    const deleted = await this.sql`delete from idempotency_keys where created_at < ${cutoff}`;
    return deleted.count;
  }
}
