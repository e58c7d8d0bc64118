import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import type { Config } from './config.js';
import { bindDataDir, checkBinding, describeDatabase, lockDataDir, refuseIfBoundElsewhere } from './data-dir.js';
import { type EmbeddedUse, startEmbeddedPostgres } from './embedded-postgres.js';
import type { Logger } from './logger.js';
import type { Queryable, Sql } from './sql.js';

// Test support starts its own PostgreSQL with these.
export { freePort, importWithoutExitHooks } from './embedded-postgres.js';

export type { Queryable, Sql, Tx } from './sql.js';

export interface Database {
  sql: Sql;
  /**
   * One connection of its own, outside the pool, for session-level advisory locks held across requests'
   * bodies (resumable uploads): it never ages out as pool connections do, and a process that dies frees
   * every lock it held with it. Connected on its first query.
   */
  locks: Sql;
  close(): Promise<void>;
}

/**
 * The SET list of a partial update (`update t set ${setChanged(tx, values)} where …`): each value that is not
 * undefined (undefined leaves its column as it is), and updated_at = now(). Keys are camelCase; the
 * transform writes them snake_case.
 */
export function setChanged(sql: Queryable, values: Record<string, string | number | boolean | null | undefined>) {
  const set: Record<string, string | number | boolean | null | postgres.PendingQuery<postgres.Row[]>> = { updatedAt: sql`now()` };
  for (const [column, value] of Object.entries(values)) if (value !== undefined) set[column] = value;
  // A fragment is a valid value here (postgres.js inlines it); its typings only admit parameters.
  return sql(set as Record<string, string | null>);
}

/** Whether `error` is PostgreSQL refusing a row that would repeat a key of the unique index `index`. */
export function violatesUniqueIndex(error: unknown, index: string): boolean {
  return error instanceof postgres.PostgresError && error.code === '23505' && error.constraint_name === index;
}

/**
 * int8 (byte counts, identity ids, count(*)) as a number instead of postgres.js's string: every value the
 * server stores stays far below 2^53 (sizes are bounded by the upload limits).
 */
const BIGINT_AS_NUMBER = {
  to: 20,
  from: [20],
  serialize: (value: number) => String(value),
  parse: (value: string) => Number(value),
};

const MIGRATION_LOCK_KEY = 0x62616e64; // "band"

/**
 * Opens `DATABASE_URL`, or the embedded PostgreSQL under `DATA_DIR`, and applies migrations. The server owns
 * the embedded database (`use`); admin commands (the default) join the one a running server owns.
 *
 * A server refuses to start, changing nothing, on a DATA_DIR whose files belong to another database (see
 * data-dir.ts); once migrated, the DATA_DIR records its database. With the embedded database the server also
 * takes DATA_DIR for itself (its PostgreSQL lives there); with DATABASE_URL several instances may share one
 * DATA_DIR. Closing releases what was taken.
 */
export async function openDatabase(config: Config, log: Logger, use: EmbeddedUse = { kind: 'command' }): Promise<Database> {
  const database = describeDatabase(config.databaseUrl);
  // What is taken so far, undone in reverse order on a failure and at close.
  const taken: (() => Promise<void>)[] = [];
  const release = async () => {
    for (const undo of taken.reverse()) await undo();
  };
  try {
    let url = config.databaseUrl;
    if (url === null) {
      if (use.kind === 'server') {
        await refuseIfBoundElsewhere(config.dataDir, database);
        taken.push(await lockDataDir(config.dataDir));
      }
      const embedded = await startEmbeddedPostgres(config.dataDir, log, use);
      taken.push(embedded.stop);
      url = embedded.url;
    }
    const sql = postgres(url, { ...CONNECTION_OPTIONS, max: 10 });
    taken.push(() => sql.end({ timeout: 5 }));
    if (use.kind === 'server') {
      await checkBinding(sql, config.dataDir, database);
    }
    await migrate(sql, log);
    if (use.kind === 'server') await bindDataDir(sql, config.dataDir, database);
    // A session's locks go with the session: no lifetime (and, as in the pool, no idle timeout), so it is never replaced unasked.
    const locks = postgres(url, { ...CONNECTION_OPTIONS, max: 1, max_lifetime: null });
    taken.push(() => locks.end({ timeout: 5 }));
    return { sql, locks, close: release };
  } catch (error) {
    await release();
    throw error;
  }
}

const CONNECTION_OPTIONS = {
  // After failed connects postgres.js waits up to 20 s before the next attempt, and queries wait with it:
  // a database back after an outage would go unused for that long. At most 1 s between attempts instead.
  backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
  onnotice: () => undefined,
  // `live` (migration 039) first: unqualified names reach its views, which leave out what is in the trash, so
  // every query sees only live rows without saying so; the trash's own code names `public.` tables.
  connection: { application_name: 'bandcollab', search_path: 'live, public' },
  // Columns come back camelCase and keys of sql(obj) helpers go out snake_case. Only column names:
  // postgres.camel would also rename the keys inside json values.
  transform: { column: { from: postgres.toCamel, to: postgres.fromCamel } },
  types: { bigint: BIGINT_AS_NUMBER },
};

/**
 * Applies the versioned SQL files in `migrations/` in order, once. One transaction holds an advisory lock,
 * so two instances starting at once apply each file exactly once, and a failing file applies nothing.
 */
async function migrate(sql: Sql, log: Logger): Promise<void> {
  const dir = findMigrationsDir();
  const files = (await readdir(dir)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    // Migrations create and alter the tables themselves, never the `live` views over them.
    await tx`set local search_path to public`;
    await tx`create table if not exists schema_migrations (
      version text primary key, applied_at timestamptz not null default now())`;
    const applied = new Set((await tx`select version from schema_migrations`).map((r) => r.version as string));
    let changed = false;
    for (const file of files) {
      if (applied.has(file)) continue;
      await tx.unsafe(await readFile(path.join(dir, file), 'utf8'));
      await tx`insert into schema_migrations (version) values (${file})`;
      log.info('migration applied', { version: file });
      changed = true;
    }
    // The trash's `live` views (migration 039) list their tables' columns as they were when made: made again
    // after any migration, they hold the columns later ones added.
    const [views] = await tx<{ found: boolean }[]>`select to_regprocedure('public.create_live_views()') is not null as found`;
    if (changed && views!.found) await tx`select public.create_live_views()`;
  });
}

function findMigrationsDir(): string {
  // The same code runs bundled (dist/main.js) and from source (src/core/database.ts) in tests.
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const candidate = path.join(dir, 'migrations');
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('migrations directory not found');
}
