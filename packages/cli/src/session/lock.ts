// `.band/lock`: one run per folder. It names the process of the run that made it, by PID and start time, from
// the moment it exists (written whole, then linked to its name). A lock whose process is provably gone (a push
// killed with -9) is stale and taken over, and so is one whose PID the OS has since given to another process
// (its start time differs); a lock band cannot read is held, as it may be another run's. Not proper-lockfile
// (which the credentials use): its locks go stale by age, so a run paused longer than that (Ctrl-Z, a laptop
// asleep) would lose the folder to a second run.
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { CliError, EXIT } from '../exit-codes.js';
import { STATE_DIR } from './manifest.js';
import type { SafeFolder } from './safe-folder.js';

export interface FolderLock {
  release(): Promise<void>;
}

/** A process as a lock names it. `started` is what the OS says of its start (opaque); absent when it says nothing. */
export interface LockHolder {
  pid: number;
  started?: string;
}

/** Is a process with this PID running (one of another user counts: signalling it is refused, not unknown)? */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When the process started, as the OS tells it: the start time in clock ticks since boot of /proc/PID/stat on
 * Linux, `ps -o lstart=` elsewhere (macOS, BSDs); undefined when neither answers (Windows, a process gone).
 */
export async function processStart(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (in parentheses, which may hold spaces) start at field 3; starttime is field 22.
    return `ticks ${stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[19]}`;
  } catch {
    // No /proc: ask ps.
  }
  try {
    const { stdout } = await promisify(execFile)('ps', ['-o', 'lstart=', '-p', String(pid)]);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Is the process the lock names still running: its PID alive, and (when both are known) started when it was? */
export async function holderRunning(holder: LockHolder): Promise<boolean> {
  if (!processAlive(holder.pid)) return false;
  if (holder.started === undefined) return true;
  const started = await processStart(holder.pid);
  return started === undefined || started === holder.started;
}

export async function lockFolder(folder: SafeFolder, me?: LockHolder, running: (holder: LockHolder) => Promise<boolean> = holderRunning): Promise<FolderLock> {
  const self = me ?? { pid: process.pid, started: await processStart(process.pid) };
  const mine = `${self.pid}${self.started === undefined ? '' : ` ${self.started}`}\n`;
  const file = path.join(folder.root, LOCK);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (await folder.createWhole(LOCK, mine)) return { release: () => release(folder, mine) };
    const text = await folder.readText(LOCK).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? null : undefined));
    if (text === null) continue; // released meanwhile
    const holder = text === undefined ? undefined : parseHolder(text);
    if (!holder) throw new CliError(`${file} is not a lock band can read (another run may be making it): if no band run is working on ${folder.root}, remove it`, EXIT.error);
    if (holder.pid !== self.pid && (await running(holder))) {
      throw new CliError(`another band run (PID ${holder.pid}) is working on ${folder.root}; wait for it to end`, EXIT.error);
    }
    // Stale: its process is gone, or its PID is another process's now.
    await removeIfHolding(folder, text!);
  }
  throw new CliError(`could not lock ${folder.root}: another run keeps taking ${file}`, EXIT.error);
}

const LOCK = `${STATE_DIR}/lock`;

/** Removes the lock if it still holds `text`: moved aside first, so a lock another run made meanwhile is put back, not lost. */
async function removeIfHolding(folder: SafeFolder, text: string): Promise<void> {
  const aside = `${LOCK}.${randomBytes(6).toString('hex')}.stale`;
  try {
    await folder.move(LOCK, aside, { replace: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if ((await folder.readText(aside).catch(() => undefined)) !== text) await folder.move(aside, LOCK, { replace: false }).catch(() => undefined);
  await folder.remove(aside);
}

/** Ends this run's lock: only while it is this run's. */
async function release(folder: SafeFolder, mine: string): Promise<void> {
  if ((await folder.readText(LOCK).catch(() => undefined)) === mine) await folder.remove(LOCK);
}

/** "<pid> <started>\n", or "<pid>\n" (an earlier band's lock, or an OS that tells no start time). */
function parseHolder(text: string): LockHolder | undefined {
  const match = /^(\d+)(?: (.+))?\n$/.exec(text);
  if (!match) return undefined;
  const pid = Number(match[1]);
  return pid > 0 ? { pid, ...(match[2] === undefined ? {} : { started: match[2] }) } : undefined;
}
