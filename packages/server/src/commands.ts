import 'reflect-metadata';
import { readdir } from 'node:fs/promises';
import type { DependencyContainer } from 'tsyringe';
import { AccountsRepository } from './accounts/repository.js';
import { AdminRepository } from './admin/repository.js';
import { AdminJobsService, AdminService, toAdminUser } from './admin/service.js';
import { Passwords } from './auth/passwords.js';
import { AuthRepository } from './auth/repository.js';
import { BackupError, BackupService, type Manifest, readBackup } from './backup/service.js';
import { compose } from './composition.js';
import { type Config, SETTINGS } from './core/config.js';
import { bindDataDir, checkBinding, DataDirRefused, describeDatabase, isBound } from './core/data-dir.js';
import { type Database, openDatabase } from './core/database.js';
import { systemClock } from './core/clock.js';
import { StoredObjects } from './core/stored-objects.js';
import { DomainError } from './core/errors.js';
import { PreviewsRepository } from './previews/repository.js';
import { type BlobStore, type ListedObject, openBlobStore } from './core/store/index.js';
import { Logger } from './core/logger.js';
import { SessionsRepository } from './core/sessions-repository.js';
import { migrateStorage } from './storage-migration/command.js';
import { randomToken } from './core/tokens.js';
import { openApiDocument } from './operations/openapi.js';
import { findOrphans } from './operations/orphans.js';
import { renderReference } from './operations/reference.js';
import { renderSettings } from './operations/settings-reference.js';
import { TokensRepository } from './tokens/repository.js';

const USAGE = `Usage: bandcollab-server [command]

Without a command, starts the server (settings from the environment, see README). SIGINT or SIGTERM stops
it: requests in flight get SHUTDOWN_GRACE_SECONDS (default ${SETTINGS.SHUTDOWN_GRACE_SECONDS.default}) to finish, uploads still running then
answer 503, and the embedded database is stopped; a second signal ends the grace period at once.

Commands (on the database the same settings select; beside a running server they use its embedded
database, and never stop it):
  set-role <email> <ADMIN|MEMBER>   set a user's site role (the role in any case)
  reset-password <email>            give a user who forgot their password a one-time password (printed
                                    once); it must be changed at the next sign-in, and the account's
                                    sessions and personal access tokens end (the count is printed);
                                    safe beside a running server
  orphans                           list the stored files no record refers to, unchanged for a day
                                    (nothing else looks for them), in DATA_DIR or the bucket (STORAGE), and
                                    those moved under orphans/; safe beside running servers, as are --move
                                    and --purge
  orphans --move                    move them under orphans/ (on S3: copy, then delete)
  orphans --purge                   delete them, and what orphans/ holds, for good
  backup <dir>                      write a consistent copy of the database and of the stored files its
                                    rows refer to into <dir> (new or empty), their listening previews
                                    included, with a manifest.json (row counts, sha256 of every file); safe
                                    beside a running server. With STORAGE=s3 the objects stay in the bucket:
                                    the manifest lists their keys and sha256, and restore checks that the
                                    bucket holds every one
  restore <dir>                     restore such a backup onto an empty DATA_DIR (embedded database) or an
                                    empty database (DATABASE_URL) with no stored files, then start the
                                    server on it. Refuses anything else, and a backup that fails its checks.
                                    A preview the backup does not carry (missing when it was made, or a
                                    backup from before backups carried them) is queued to be made again
  migrate-storage --to s3           copy every stored file from DATA_DIR (previews included) into the bucket
                                    the STORAGE=s3 and S3_* settings name, each verified by its sha256;
                                    resumable (run it again
                                    after an interruption), safe beside a running server. Then stop the
                                    server, run it once more, and start it with STORAGE=s3 (docs/storage.md)
  users list                        list the accounts: email, role, active or deactivated, last sign-in
  users deactivate <email>          deactivate an account: it cannot sign in, its sessions and personal
                                    access tokens end at once (the count is printed), its files stay;
                                    safe beside a running server
  users activate <email>            let a deactivated account sign in again
  jobs [list]                       the background job queue: jobs by kind and state, how long the oldest
                                    due job has waited, then the last 100 failed jobs (id, kind, attempts,
                                    last error), tab-separated; safe beside running servers
  jobs retry <id>                   run a failed job again, its attempts renewed (exit 1: no such job or
                                    not failed)
  previews backfill                 queue the listening previews of the audio files stored before previews
                                    existed (§20), and with PREVIEW_STEMS=true those of the audio entries of
                                    STEM ZIPs that have none, in batches; the running servers make them. Resumable:
                                    run it again after an interruption (what is queued or made is skipped);
                                    safe beside running servers
  api-reference                     print the API reference (Markdown), as GET /api/reference serves it
  settings-reference                print the settings with their defaults (Markdown), as the README lists them
  help                              show this help`;

const COMMANDS = new Set(['set-role', 'reset-password', 'orphans', 'backup', 'restore', 'migrate-storage', 'users', 'jobs', 'api-reference', 'settings-reference', 'help']);
/** The options some command takes: any other is named as unknown. */
const OPTIONS = new Set(['--move', '--purge', '--to']);

/** 435000 → "424.8 KiB", as band prints sizes; the exact count follows it in the summaries. */
function humanBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  for (; value >= 1024 && unit < units.length - 1; unit += 1) value /= 1024;
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** One line for arguments no command takes: the unknown option, else the command as given. */
function whatIsWrong(command: string | undefined, rest: string[]): string {
  const unknown = [command, ...rest].find((arg) => arg?.startsWith('-') && !OPTIONS.has(arg));
  if (unknown) return `unknown option ${unknown}${command && command !== unknown ? ` for ${command}` : ''}`;
  if (command && COMMANDS.has(command)) return `${command} takes other arguments than ${rest.length === 0 ? 'none' : `"${rest.join(' ')}"`}: see its line below`;
  return `unknown command "${command}"`;
}

/**
 * The server's pieces on a database a command opened (and the store, for a command that reads stored bytes),
 * from the server's own composition root: a command resolves what it uses, and wires nothing by hand.
 */
function on(config: Config, database: Database, store?: BlobStore): DependencyContainer {
  return compose({ config, log: new Logger('warn'), database, clock: systemClock, store });
}

/** Administrative commands run against the same database the server uses. Returns the exit code. */
export async function runCommand(config: Config, args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === 'orphans' && rest.length <= 1) {
    const action = rest.length === 0 ? 'list' : ORPHAN_ACTIONS[rest[0]!];
    if (action) return orphans(config, action);
  }
  if (command === 'api-reference' && rest.length === 0) {
    process.stdout.write(renderReference(openApiDocument()));
    return 0;
  }
  if (command === 'settings-reference' && rest.length === 0) {
    process.stdout.write(`${renderSettings()}\n`);
    return 0;
  }
  if ((command === 'backup' || command === 'restore') && rest.length === 1) {
    return backupOrRestore(config, command, rest[0]!);
  }
  if (command === 'migrate-storage' && rest.length === 2 && rest[0] === '--to' && rest[1] === 's3') return migrateStorage(config);
  if (command === 'users' && rest.length === 1 && rest[0] === 'list') return listUsers(config);
  if (command === 'users' && rest.length === 2 && (rest[0] === 'deactivate' || rest[0] === 'activate')) {
    return setUserActive(config, rest[1]!, rest[0] === 'activate');
  }
  if (command === 'jobs' && (rest.length === 0 || (rest.length === 1 && rest[0] === 'list'))) return listJobs(config);
  if (command === 'jobs' && rest.length === 2 && rest[0] === 'retry') return retryJob(config, rest[1]!);
  if (command === 'previews' && rest.length === 1 && rest[0] === 'backfill') return backfillPreviews(config);
  if (command === 'reset-password' && rest.length === 1) {
    return resetPassword(config, rest[0]!);
  }
  // Roles in any case: `set-role someone@example.com admin` is what people type.
  const role = rest[1]?.toUpperCase();
  if (command !== 'set-role' || rest.length !== 2 || (role !== 'ADMIN' && role !== 'MEMBER')) {
    process.stderr.write(`error: ${whatIsWrong(command, rest)}\n\n${USAGE}\n`);
    return 2;
  }
  const email = rest[0]!;
  const database = await openDatabase(config, new Logger('warn'));
  try {
    const user = await on(config, database).resolve(AuthRepository).setRole(email.trim().toLowerCase(), role);
    if (!user) {
      process.stderr.write(`No user with email ${email}\n`);
      return 1;
    }
    process.stdout.write(`${user.email} is now ${user.role}\n`);
    return 0;
  } finally {
    await database.close();
  }
}

/**
 * Sets a one-time password (256 random bits) and ends the account's sessions and personal access tokens, in
 * one transaction: whoever had the account may have minted tokens, and a token outlives a password. Until
 * the user changes it every endpoint but POST /api/auth/password answers 403 PASSWORD_CHANGE_REQUIRED.
 * Running servers hear of all of it through PostgreSQL's notices. Exit codes: 0 done, 1 no such user.
 */
async function resetPassword(config: Config, email: string): Promise<number> {
  const oneTimePassword = randomToken();
  const database = await openDatabase(config, new Logger('warn'));
  try {
    const pieces = on(config, database);
    const passwordHash = await pieces.resolve(Passwords).hash(oneTimePassword, { account: 'reset-password command' });
    const accounts = pieces.resolve(AccountsRepository);
    const users = pieces.resolve(AuthRepository);
    const sessions = pieces.resolve(SessionsRepository);
    const tokens = pieces.resolve(TokensRepository);
    const revokedTokens = await database.sql.begin(async (tx) => {
      const userId = await accounts.findIdByEmail(tx, email.trim().toLowerCase());
      if (userId === null) return null;
      await users.setPassword(tx, userId, passwordHash, true);
      await sessions.revokeAllOfUser(tx, userId);
      return tokens.deleteAllOf(tx, userId);
    });
    if (revokedTokens === null) {
      process.stderr.write(`No user with email ${email}\n`);
      return 1;
    }
    process.stdout.write(`${oneTimePassword}\n`);
    process.stderr.write(
      `One-time password for ${email.trim().toLowerCase()} (shown only now); it must be changed at the next sign-in. ` +
        `Its sessions ended, and ${revokedTokens} personal access token(s) were revoked\n`,
    );
    return 0;
  } finally {
    await database.close();
  }
}

/** One account a line, tab-separated: email, role, active|deactivated, last sign-in (or -), name. Exit code 0. */
async function listUsers(config: Config): Promise<number> {
  const database = await openDatabase(config, new Logger('warn'));
  try {
    process.stdout.write('EMAIL\tROLE\tSTATUS\tLAST SIGN-IN\tNAME\n');
    for (const user of (await on(config, database).resolve(AdminRepository).accounts()).map(toAdminUser)) {
      process.stdout.write(`${user.email}\t${user.role}\t${user.active ? 'active' : 'deactivated'}\t${user.lastSignInAt ?? '-'}\t${user.name}\n`);
    }
    return 0;
  } finally {
    await database.close();
  }
}

/**
 * Deactivates an account (its sessions and personal access tokens end in the same transaction; running servers
 * hear of it through PostgreSQL's notices and close its WebSockets) or activates it again. Exit codes: 0 done,
 * 1 no such user.
 */
async function setUserActive(config: Config, email: string, active: boolean): Promise<number> {
  const database = await openDatabase(config, new Logger('warn'));
  try {
    const pieces = on(config, database);
    const admin = pieces.resolve(AdminService);
    const userId = await pieces.resolve(AdminRepository).findIdByEmail(email.trim().toLowerCase());
    const changed = userId === null ? null : await admin.setActiveUnchecked(userId, active);
    if (changed === null) {
      process.stderr.write(`No user with email ${email}\n`);
      return 1;
    }
    process.stdout.write(
      active
        ? `${changed.user.email} is active: it can sign in again\n`
        : `${changed.user.email} is deactivated: its sessions ended, and ${changed.revokedTokens} personal access token(s) were revoked; its files stay\n`,
    );
    if (changed.shareLinks.length > 0) {
      process.stdout.write(`${changed.shareLinks.length} share link(s) ${active ? 'serving again' : 'suspended while it is deactivated'}:\n`);
      for (const link of changed.shareLinks) process.stdout.write(`  ${link.kind} ${JSON.stringify(link.name)}\t${link.id}\n`);
    }
    return 0;
  } finally {
    await database.close();
  }
}

/** The admin view of GET /api/admin/jobs as tab-separated lines: counts, the oldest wait, the failed jobs. Exit code 0. */
async function listJobs(config: Config): Promise<number> {
  const database = await openDatabase(config, new Logger('warn'));
  try {
    const overview = await on(config, database).resolve(AdminJobsService).overview(null, {});
    for (const { kind, state, count } of overview.counts) process.stdout.write(`${kind}\t${state}\t${count}\n`);
    const waited = overview.oldestQueuedSeconds;
    process.stdout.write(waited === null ? 'no job is waiting to start\n' : `the oldest job due has waited ${Math.round(waited)} s\n`);
    for (const job of overview.failed) {
      // One line a job: an error's own line breaks would break the columns.
      process.stdout.write(`failed\t${job.id}\t${job.kind}\t${job.attempts}/${job.maxAttempts}\t${job.finishedAt ?? '-'}\t${(job.lastError ?? '').replace(/\s+/g, ' ')}\n`);
    }
    return 0;
  } finally {
    await database.close();
  }
}

/** Files looked at per transaction of the backfill: each batch commits its jobs, so an interruption loses none. */
const BACKFILL_BATCH = 500;

/**
 * Queues the previews of the files still `pending` without a job (stored before previews existed), batch by
 * batch in id order; the servers' preview workers make them. Exit code 0.
 */
async function backfillPreviews(config: Config): Promise<number> {
  const database = await openDatabase(config, new Logger('warn'));
  try {
    const repository = on(config, database).resolve(PreviewsRepository);
    let queued = 0;
    const steps = [repository.backfillStep.bind(repository), ...(config.previewStems ? [repository.backfillEntriesStep.bind(repository)] : [])];
    for (const step of steps) {
      let afterId: string | null = null;
      for (;;) {
        const from: string | null = afterId;
        const done: { lastId: string | null; queued: number } = await database.sql.begin((tx) => step(tx, from, BACKFILL_BATCH));
        queued += done.queued;
        if (done.lastId === null) break;
        afterId = done.lastId;
      }
    }
    process.stdout.write(`${queued} preview${queued === 1 ? '' : 's'} queued\n`);
    return 0;
  } finally {
    await database.close();
  }
}

/** Queues a failed job again. Exit codes: 0 done, 1 no such job or not failed. */
async function retryJob(config: Config, id: string): Promise<number> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    process.stderr.write(`Not a job id: ${id}\n`);
    return 1;
  }
  const database = await openDatabase(config, new Logger('warn'));
  try {
    const retried = await on(config, database).resolve(AdminJobsService).retry(null, id);
    process.stdout.write(`job ${retried.id} is ${retried.state} again\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    process.stderr.write(`${error.detail}\n`);
    return 1;
  } finally {
    await database.close();
  }
}

const ORPHAN_ACTIONS: Record<string, 'move' | 'purge'> = { '--move': 'move', '--purge': 'purge' };

/**
 * Stored objects no row of DATA_DIR's own database refers to, unchanged for a day (STRAY_AGE_MS): a younger one
 * may be an upload between storing and recording on a running instance, so listing, moving and deleting are all
 * safe beside running servers. They are looked for where STORAGE keeps them: DATA_DIR, or the bucket under
 * S3_PREFIX. Moving and deleting need DATA_DIR to name its database (with a wrong DATABASE_URL every object
 * would look orphaned), and a store that holds none of the objects the database refers to (another bucket or
 * S3_PREFIX) is refused. Exit codes: 0 done, 1 refused.
 */
async function orphans(config: Config, action: 'list' | 'move' | 'purge'): Promise<number> {
  const log = new Logger('warn');
  const database = describeDatabase(config.databaseUrl);
  const storage = config.storage;
  const place = storage.driver === 's3' ? `bucket ${storage.bucket}${storage.prefix ? ` under ${storage.prefix}` : ''}` : config.dataDir;
  const what = storage.driver === 's3' ? 'object(s)' : 'file(s)';
  try {
    if (action !== 'list' && !(await isBound(config.dataDir))) {
      throw new DataDirRefused(`DATA_DIR ${config.dataDir} does not record its database yet: start the server on it once, then run orphans --${action}.`);
    }
    const opened = await openDatabase(config, log);
    let store: Awaited<ReturnType<typeof openBlobStore>> | null = null;
    try {
      await checkBinding(opened.sql, config.dataDir, database);
      // Opened after the binding check: the local driver makes its directories.
      store = await openBlobStore(config);
      const disk = on(config, opened, store).resolve(StoredObjects);
      const found = await findOrphans(opened.sql, disk, systemClock);
      if (action !== 'list' && found.referenced.total > 0 && found.referenced.found === 0) {
        throw new DataDirRefused(`${place} holds none of the ${found.referenced.total} object(s) the database refers to: it is not this database's store.`);
      }
      const all = [...found.inPlace, ...found.moved];
      const bytes = (objects: ListedObject[]) => objects.reduce((sum, object) => sum + object.size, 0);
      if (action === 'move') {
        await disk.moveOrphans(found.inPlace, found.moved);
        process.stdout.write(`moved ${found.inPlace.length} ${what}, ${bytes(found.inPlace)} bytes, to ${storage.driver === 's3' ? 'orphans/' : disk.orphansDir}\n`);
      } else if (action === 'purge') {
        await disk.purgeOrphans(all);
        process.stdout.write(`deleted ${all.length} ${what}, ${bytes(all)} bytes\n`);
      } else {
        for (const orphan of all) process.stdout.write(`${orphan.size}\t${orphan.key}\n`);
        process.stderr.write(
          `${all.length} stored ${what} without a record, ${bytes(all)} bytes, in ${place}: ` +
            `${found.inPlace.length} in files/, images/ and previews/, ${found.moved.length} in orphans/\n`,
        );
      }
      return 0;
    } finally {
      store?.close();
      await opened.close();
    }
  } catch (error) {
    if (!(error instanceof DataDirRefused)) throw error;
    process.stderr.write(`orphans${action === 'list' ? '' : ` --${action}`} refused: ${error.message}\n`);
    return 1;
  }
}

/** Exit codes: 0 done, 1 refused or failed (the message says why). */
async function backupOrRestore(config: Config, command: 'backup' | 'restore', dir: string): Promise<number> {
  const log = new Logger('warn');
  try {
    let manifest: Manifest | undefined;
    if (command === 'restore') {
      manifest = await readBackup(dir);
      if (config.databaseUrl === null && (await entries(config.dataDir)).length > 0) {
        throw new BackupError(`DATA_DIR is not empty: ${config.dataDir}. Restore only onto a new DATA_DIR, then start the server on it`);
      }
    }
    const database = await openDatabase(config, log);
    const described = describeDatabase(config.databaseUrl);
    // Opened after the check that DATA_DIR is empty: the local driver makes its directories.
    const store = await openBlobStore(config);
    try {
      const service = on(config, database, store).resolve(BackupService);
      if (manifest) {
        const { previewsRemade } = await service.restore(dir, manifest);
        if (previewsRemade > 0) {
          process.stdout.write(`${previewsRemade} preview(s) the backup does not carry are queued to be made again; the server makes them once started\n`);
        }
        // DATA_DIR now holds the files of this database (whatever it recorded before: it held no stored file).
        await bindDataDir(database.sql, config.dataDir, described);
      } else {
        await checkBinding(database.sql, config.dataDir, described);
        manifest = await service.backup(dir);
      }
    } finally {
      store.close();
      await database.close();
    }
    const rows = manifest.tables.reduce((sum, table) => sum + table.rows, 0);
    const stored = manifest.objects ?? manifest.files;
    const bytes = stored.reduce((sum, file) => sum + file.size, 0);
    const done = command === 'backup' ? `backed up to ${dir}` : `restored from ${dir}`;
    const what = manifest.objects && config.storage.driver === 's3' ? `stored object(s) in bucket ${config.storage.bucket} (listed, not copied)` : 'stored file(s)';
    process.stdout.write(`${done}: ${manifest.tables.length} tables, ${rows} rows, ${stored.length} ${what}, ${humanBytes(bytes)} (${bytes} bytes)\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof BackupError) && !(error instanceof DataDirRefused)) throw error;
    process.stderr.write(`${command} refused: ${error.message}\n`);
    return 1;
  }
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
