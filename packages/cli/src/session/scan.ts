// What a session folder holds: its regular files, relative POSIX paths, without what `.bandignore` (and its
// DAW defaults) leaves out, nor the `.bandignore` itself (each folder's own). Symbolic links are never
// followed: a link to a sample library would otherwise upload the library.
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { IGNORE_FILE } from '@bandcollab/sdk';
import ignore, { type Ignore } from 'ignore';

/** Band's own state, version control's, and the caches and backups DAWs write beside a session: never pushed or pulled. */
export const DEFAULT_IGNORES = [
  '.band/',
  '.git/',
  '.hg/',
  '.svn/',
  'Session File Backups/', // Pro Tools
  'WaveCache.wfm', // Pro Tools
  '*.asd', // Ableton Live analysis files
  'Backup/', // Ableton Live
  '*.reapeaks', // REAPER peaks
  '*.RPP-bak', // REAPER backups
  '.DS_Store', // macOS Finder
  '._*', // macOS resource forks on foreign file systems
  '*.band-conflict-v[0-9]*', // the cut's version pull wrote beside a file changed on both sides
];

export interface ScannedFile {
  /** Relative POSIX path, as the folder's file system spells it. */
  path: string;
  size: number;
  mtimeMs: number;
}

export interface Scan {
  files: ScannedFile[];
  /** Symbolic links met (not followed), relative paths. */
  symlinks: string[];
  /** Files the rules left out, in the folders walked: names a conflict copy must not take. */
  ignored: string[];
}

/**
 * The rules of a folder: the defaults, then its `.bandignore` (whose `!` lines may take a default back).
 * Matched ignoring case, as git does on macOS and Windows, where most sessions live (`*.rpp-bak` too).
 */
export async function ignoreRules(dir: string): Promise<Ignore> {
  const rules = ignore().add(DEFAULT_IGNORES);
  try {
    rules.add(await readFile(path.join(dir, IGNORE_FILE), 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return rules;
}

/** Every regular file of `dir` the rules keep, sorted by path; a missing folder holds nothing. */
export async function scanFolder(dir: string, rules: Ignore): Promise<Scan> {
  const scan: Scan = { files: [], symlinks: [], ignored: [] };
  const root = await lstat(dir).catch(() => null);
  if (!root?.isDirectory()) return scan;
  const walk = async (relativeDir: string): Promise<void> => {
    const entries = await readdir(path.join(dir, relativeDir), { withFileTypes: true });
    for (const entry of entries) {
      const relative = relativeDir === '' ? entry.name : `${relativeDir}/${entry.name}`;
      if (entry.isSymbolicLink()) {
        if (!rules.ignores(relative)) scan.symlinks.push(relative);
      } else if (entry.isDirectory()) {
        if (!rules.ignores(`${relative}/`)) await walk(relative);
      } else if (entry.isFile() && (relative === IGNORE_FILE || rules.ignores(relative))) {
        scan.ignored.push(relative);
      } else if (entry.isFile()) {
        const stats = await lstat(path.join(dir, relative));
        scan.files.push({ path: relative, size: stats.size, mtimeMs: stats.mtimeMs });
      }
    }
  };
  await walk('');
  scan.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  scan.symlinks.sort();
  return scan;
}
