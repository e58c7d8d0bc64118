import { inject, injectable } from 'tsyringe';
import type { Sql, Tx } from './database.js';
import { SQL } from './di.js';

/** The rows of the pending_objects ledger (migration 034). */
@injectable()
export class PendingObjectsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** Records `key` as being written; a key written again (a completion retried) counts its age from now. */
  async add(key: string): Promise<void> {
    await this.sql`
      insert into pending_objects (key) values (${key})
      on conflict (key) do update set created_at = now()`;
  }

  /** Takes `key` off the ledger in the transaction that records its row; false when it was not on it. */
  async settle(tx: Tx, key: string): Promise<boolean> {
    return (await tx`delete from pending_objects where key = ${key}`).count === 1;
  }

  /** Those of `keys` on the ledger: objects being written (or left by a crash, for the purge job). */
  async among(keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    return new Set((await this.sql<{ key: string }[]>`select key from pending_objects where key = any(${this.sql.array([...keys])}::text[])`).map((row) => row.key));
  }

  async count(): Promise<number> {
    return (await this.sql<{ count: number }[]>`select count(*)::int as count from pending_objects`)[0]!.count;
  }

  async forget(key: string): Promise<void> {
    await this.sql`delete from pending_objects where key = ${key}`;
  }

  /**
   * Entries older than `ageSeconds`, a batch at a time, locked for `tx`: a recording transaction that reaches
   * one waits until the purge has committed, then finds it gone.
   */
  async lockStale(tx: Tx, ageSeconds: number): Promise<string[]> {
    const rows = await tx<{ key: string }[]>`
      select key from pending_objects
      where created_at < now() - make_interval(secs => ${ageSeconds})
      order by created_at
      limit ${STALE_BATCH}
      for update skip locked`;
    return rows.map((row) => row.key);
  }

  async forgetAll(tx: Tx, keys: string[]): Promise<void> {
    if (keys.length > 0) await tx`delete from pending_objects where key = any(${this.sql.array(keys)}::text[])`;
  }
}

/** Entries one purge round deals with; the next round takes the rest. */
const STALE_BATCH = 100;
