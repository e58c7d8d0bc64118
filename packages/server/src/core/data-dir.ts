import { randomUUID } from 'node:crypto';
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Queryable } from './sql.js';

/**
 * Who a DATA_DIR belongs to. Its stored files mean something only beside the rows of one database:
 *   DATA_DIR/database.json  the id (table database_identity) and the name of the database its files belong to,
 *                           written at the first start; a server with another database refuses to start
 *   DATA_DIR/server.lock    the pid of the server running on it with the embedded database (which lives in
 *                           DATA_DIR): a second such server refuses to start. Servers on DATABASE_URL take no
 *                           lock: several instances of one database share its DATA_DIR.
 * A refusal is one line naming both sides, and changes nothing in DATA_DIR.
 */
export class DataDirRefused extends Error {}

const BINDING_FILE = 'database.json';
const LOCK_FILE = 'server.lock';

interface Binding {
  id: string;
  /** For people: `<name> on <host>:<port>`, or the embedded database. */
  database: string;
}

/** The embedded database, wherever DATA_DIR is: a DATA_DIR may be moved. */
const EMBEDDED = 'the embedded PostgreSQL in DATA_DIR/postgres';

/** How the DATA_DIR's records name a database: never with its user or password. */
export function describeDatabase(databaseUrl: string | null): string {
  if (databaseUrl === null) return EMBEDDED;
  const url = new URL(databaseUrl);
  return `${decodeURIComponent(url.pathname.slice(1)) || 'postgres'} on ${url.hostname}:${url.port || '5432'}`;
}

/** The database's id, or null when it has none yet (a new database, or one from before migration 022). */
export async function databaseId(sql: Queryable): Promise<string | null> {
  const [table] = await sql<{ exists: boolean }[]>`select to_regclass('database_identity') is not null as exists`;
  if (!table!.exists) return null;
  const [row] = await sql<{ id: string }[]>`select id from database_identity`;
  return row?.id ?? null;
}

async function readBinding(dataDir: string): Promise<Binding | null> {
  let text: string;
  try {
    text = await readFile(path.join(dataDir, BINDING_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const binding = JSON.parse(text) as Partial<Binding>;
  if (typeof binding.id !== 'string' || typeof binding.database !== 'string') throw new DataDirRefused(`${path.join(dataDir, BINDING_FILE)} is damaged: it names no database id`);
  return binding as Binding;
}

const mismatch = (dataDir: string, recorded: Binding, database: string, id: string | null): DataDirRefused =>
  new DataDirRefused(
    `DATA_DIR ${dataDir} holds the files of ${recorded.database} (database id ${recorded.id}), not of ${database} ` +
      `(${id === null ? 'a new database' : `database id ${id}`}): start with the database it belongs to, or another DATA_DIR ` +
      `(if ${database} really is its database, delete ${path.join(dataDir, BINDING_FILE)}).`,
  );

/**
 * Before anything is started on `dataDir` for the embedded database: refuses a DATA_DIR whose files belong to
 * a database elsewhere (DATABASE_URL), before the embedded one is initialised in it.
 */
export async function refuseIfBoundElsewhere(dataDir: string, database: string): Promise<void> {
  const recorded = await readBinding(dataDir);
  if (recorded && recorded.database !== database) throw mismatch(dataDir, recorded, database, null);
}

/** Refuses (changing nothing) when `dataDir`'s files belong to another database than `sql`'s. */
export async function checkBinding(sql: Queryable, dataDir: string, database: string): Promise<void> {
  const recorded = await readBinding(dataDir);
  if (!recorded) return;
  const id = await databaseId(sql);
  if (id !== recorded.id) throw mismatch(dataDir, recorded, database, id);
}

/** Whether `dataDir` records a database at all (a DATA_DIR from before these records does not). */
export async function isBound(dataDir: string): Promise<boolean> {
  return (await readBinding(dataDir)) !== null;
}

/** Records that `dataDir`'s files belong to `sql`'s database (once migrated, it has an id). */
export async function bindDataDir(sql: Queryable, dataDir: string, database: string): Promise<void> {
  const id = await databaseId(sql);
  if (id === null) throw new Error('the database has no id: its migrations have not run');
  const file = path.join(dataDir, BINDING_FILE);
  const temp = `${file}.${randomUUID()}`;
  // The first start on DATA_DIR gets here before anything else has created it (with STORAGE=s3, or a restore onto a new one).
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeFile(temp, `${JSON.stringify({ id, database } satisfies Binding)}\n`, { mode: 0o600 });
  await rename(temp, file);
}

/**
 * Takes `dataDir` for this process until the returned release runs: refuses when a live process holds it. A
 * lock whose process is gone (killed with SIGKILL, the machine restarted) is taken over.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, LOCK_FILE);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Written whole under another name, then linked into place: the lock file never exists without its pid.
  const temp = `${file}.${randomUUID()}`;
  await writeFile(temp, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (;;) {
      try {
        await link(temp, file);
        return async () => {
          if ((await lockHolder(file)) === process.pid) await rm(file, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await lockHolder(file);
      if (holder !== null && holder !== process.pid && isAlive(holder)) {
        throw new DataDirRefused(`Another bandcollab server (pid ${holder}) runs on DATA_DIR ${dataDir}: stop it first, or give this one another DATA_DIR.`);
      }
      // Its process is gone: the lock holds nothing any more.
      await rm(file, { force: true });
    }
  } finally {
    await rm(temp, { force: true });
  }
}

async function lockHolder(file: string): Promise<number | null> {
  try {
    const pid = Number.parseInt(await readFile(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
