import { inject, injectable } from 'tsyringe';
import type { Sql, Tx } from './database.js';
import { SQL } from './di.js';
import { StoredObjects, STRAY_AGE_MS } from './stored-objects.js';
import { unavailable } from './errors.js';
import { PendingObjectsRepository } from './pending-objects-repository.js';

/**
 * Objects older than this on the ledger are a dead upload's: a form upload enters its key when its first bytes
 * are placed (S3) or when its body has ended (local directory), and there is no whole-request timeout, so an
 * upload in flight on a live instance may take hours; a day is the age the store already grants bytes without a
 * row (STRAY_AGE_MS: temporary uploads, the `orphans` command) and an incomplete resumable upload's lifetime.
 */
export const PENDING_OBJECT_AGE_SECONDS = STRAY_AGE_MS / 1000;

/**
 * Why this ledger exists: uploads write their object at its final key before the row that refers to it commits
 * (API §15: the row only after the object is complete), so a process killed in between leaves an object no row
 * names, and start-up may not go looking for such objects (other instances share the store). Each writer enters
 * the key first (`add`, its own short transaction), the transaction that records the row takes it off
 * (`settle`), and a failed write removes the object and then the entry (`discard`). What a crash leaves on the
 * ledger the purge job removes once older than PENDING_OBJECT_AGE_SECONDS (`purgeStale`), on any instance.
 */
@injectable()
export class PendingObjects {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(PendingObjectsRepository) private readonly repository: PendingObjectsRepository,
  ) {}

  /** Enters `key` before its object is written. */
  add(key: string): Promise<void> {
    return this.repository.add(key);
  }

  /**
   * In the transaction that records the row of `key`'s object. An entry the purge took (an upload older than
   * PENDING_OBJECT_AGE_SECONDS: its object may be gone) fails the transaction instead of recording a row
   * without bytes.
   */
  async settle(tx: Tx, key: string): Promise<void> {
    if (!(await this.repository.settle(tx, key))) throw unavailable('The upload took too long to be recorded; send it again', 1);
  }

  /** A write that failed or was refused: the object goes, then its entry (kept for the purge when the removal failed). */
  async discard(key: string): Promise<void> {
    if (await this.objects.removeQuietly(key)) await this.repository.forget(key);
  }

  /**
   * Run by the purge job: removes the objects of entries older than PENDING_OBJECT_AGE_SECONDS, then the
   * entries, in one transaction that locks them (a removal that failed keeps its entry for the next round).
   * Answers how many it removed.
   */
  purgeStale(): Promise<number> {
    return this.sql.begin(async (tx) => {
      const removed: string[] = [];
      for (const key of await this.repository.lockStale(tx, PENDING_OBJECT_AGE_SECONDS)) {
        if (await this.objects.removeQuietly(key)) removed.push(key);
      }
      await this.repository.forgetAll(tx, removed);
      return removed.length;
    });
  }
}
