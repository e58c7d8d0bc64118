// `.band/lock`: one run per folder. It names the process of the run that made it, by PID and start time; a lock
// whose process is gone (a push killed with -9) is stale and taken over, and so is one whose PID the OS has
// since given to another process (its start time differs).
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
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
  const dir = folder.root;
  // `.band` checked a real folder (made when missing); `wx` (O_EXCL) never writes through a link at the lock itself.
  const file = path.join(await folder.directory(STATE_DIR), 'lock');
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await writeFile(file, `${self.pid}${self.started === undefined ? '' : ` ${self.started}`}\n`, { flag: 'wx' });
      return { release: () => rm(file, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = parseHolder(await readFile(file, 'utf8').catch(() => ''));
    if (holder && holder.pid !== self.pid && (await running(holder))) {
      throw new CliError(`another band run (PID ${holder.pid}) is working on ${dir}; wait for it to end`, EXIT.error);
    }
    // Stale: its process is gone, its PID is another process's now, or the file is half written by a run that died.
    await rm(file, { force: true });
  }
  throw new CliError(`could not lock ${dir}: another run keeps taking ${file}`, EXIT.error);
}

/** "<pid> <started>\n", or "<pid>\n" (an earlier band's lock, or an OS that tells no start time). */
function parseHolder(text: string): LockHolder | undefined {
  const match = /^(\d+)(?: (.+))?\n$/.exec(text);
  if (!match) return undefined;
  const pid = Number(match[1]);
  return pid > 0 ? { pid, ...(match[2] === undefined ? {} : { started: match[2] }) } : undefined;
}
