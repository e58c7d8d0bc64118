import { inject, injectable } from 'tsyringe';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Sql } from '../core/database.js';
import { CLOCK, CONFIG, LOGGER, SQL } from '../core/di.js';
import { StoredObjects, type Orphans } from '../core/stored-objects.js';
import type { Logger } from '../core/logger.js';
import { PendingObjectsRepository } from '../core/pending-objects-repository.js';
import { FilesRepository } from '../files/repository.js';

/**
 * The stored objects no row of the database refers to and that are not on the pending_objects ledger, unchanged
 * for a day by `clock` (StoredObjects.listOrphans), and those moved under orphans/ earlier: what the `orphans` command
 * lists, moves or purges, and what the start-up warning counts.
 */
export function findOrphans(sql: Sql, objects: StoredObjects, clock: Clock, options: { limit?: number; signal?: AbortSignal } = {}): Promise<Orphans> {
  const files = new FilesRepository(sql);
  const pending = new PendingObjectsRepository(sql);
  const references = {
    among: async (keys: readonly string[]) => new Set([...(await files.referencedAmong(keys)), ...(await pending.among(keys))]),
    count: async () => (await files.storedKeyCount()) + (await pending.count()),
  };
  return objects.listOrphans(references, clock, options);
}

/**
 * The start-up count lists at most this many stored objects: enough for any store a restored backup leaves
 * things behind in to be counted whole, bounded for one that holds millions (on S3, a hundred list requests).
 */
const STARTUP_LISTING_LIMIT = 100_000;

/**
 * Counts the stored files without a record once the server is ready, in the background (start-up never waits for
 * a store's listing), and warns when there are any, pointing at the `orphans` command: after a restore of an
 * older backup, or files copied in, an operator learns of them without looking. It moves and deletes nothing.
 */
@injectable()
export class OrphansWarning {
  private readonly stopping = new AbortController();
  private running: Promise<void> = Promise.resolve();

  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(LOGGER) private readonly log: Logger,
    @inject(CONFIG) private readonly config: Config,
  ) {}

  start(): void {
    this.running = this.count().catch((error: unknown) => {
      if (!this.stopping.signal.aborted) this.log.error('could not count the stored files without a record', { error });
    });
  }

  /** Ends a count still listing, so the database can close after it. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  private async count(): Promise<void> {
    // After the ready line: the listing's first request goes out once start-up is over.
    await new Promise((resolve) => setImmediate(resolve));
    const found = await findOrphans(this.sql, this.objects, this.clock, { limit: STARTUP_LISTING_LIMIT, signal: this.stopping.signal });
    const count = found.inPlace.length;
    if (count === 0) return;
    const bytes = found.inPlace.reduce((sum, orphan) => sum + orphan.size, 0);
    const storage = this.config.storage;
    const place = storage.driver === 's3' ? `bucket ${storage.bucket}${storage.prefix ? ` under ${storage.prefix}` : ''}` : this.config.dataDir;
    const counted = found.complete ? `${count}` : `at least ${count} (among the first ${STARTUP_LISTING_LIMIT} objects listed)`;
    this.log.warn(
      `${counted} stored file(s) without a record, ${bytes} bytes, unchanged for a day, in ${place}: the orphans server command lists them (node packages/server/dist/main.js orphans), --move sets them aside under orphans/, --purge deletes them`,
      { count, bytes, complete: found.complete },
    );
  }
}
