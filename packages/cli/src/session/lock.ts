// `.band/lock`: one run per folder. It holds the PID of the run that made it; a lock whose process is gone
// (a push killed with -9) is stale and taken over.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CliError, EXIT } from '../exit-codes.js';
import { STATE_DIR } from './manifest.js';

export interface FolderLock {
  release(): Promise<void>;
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

export async function lockFolder(dir: string, pid = process.pid, alive: (pid: number) => boolean = processAlive): Promise<FolderLock> {
  const file = path.join(dir, STATE_DIR, 'lock');
  await mkdir(path.dirname(file), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await writeFile(file, `${pid}\n`, { flag: 'wx' });
      return { release: () => rm(file, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(holder) && holder > 0 && holder !== pid && alive(holder)) {
      throw new CliError(`another band run (PID ${holder}) is working on ${dir}; wait for it to end`, EXIT.error);
    }
    // Stale: its process is gone (or the file is unreadable, half written by a run that died).
    await rm(file, { force: true });
  }
  throw new CliError(`could not lock ${dir}: another run keeps taking ${file}`, EXIT.error);
}
