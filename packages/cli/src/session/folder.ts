// What push and pull share: the folder locked, its manifest checked against the cut, its files scanned and
// hashed where they changed, and the cut's latest files by path.
import path from 'node:path';
import type { BandClient, FileRecord } from '@bandcollab/sdk';
import { localState, type LocalFile } from './changes.js';
import { lockFolder, type FolderLock } from './lock.js';
import { checkManifestTarget, type Manifest, readManifest } from './manifest.js';
import { pathKey } from './paths.js';
import type { RemoteFile } from './plan.js';
import { SafeFolder } from './safe-folder.js';
import { ignoreRules, type ScannedFile, scanFolder } from './scan.js';

export interface SessionOptions {
  force: boolean;
  delete: boolean;
  maxDelete?: number;
  dryRun: boolean;
  jobs: number;
}

export interface FolderState {
  /** Absent in a dry run, which changes nothing (not even a lock file). */
  lock?: FolderLock;
  /** What every write goes through; absent in a dry run. */
  folder?: SafeFolder;
  manifest: Manifest | null;
  local: LocalFile[];
  symlinks: string[];
  /** Files the rules leave out (`Scan.ignored`). */
  ignored: string[];
  remote: RemoteFile[];
  /** How many local files were read to hash them. */
  hashed: number;
}

/** Locks `dir` (unless a dry run; `create` makes it first), then reads both sides. The caller releases the lock. */
export async function readFolder(client: BandClient, server: string, cutId: string, dir: string, options: SessionOptions & { create?: boolean }): Promise<FolderState> {
  const folder = options.dryRun ? undefined : await SafeFolder.open(dir, { create: options.create ?? false });
  const lock = folder && (await lockFolder(folder));
  try {
    const manifest = await readManifest(dir);
    if (manifest) checkManifestTarget(manifest, server, cutId, dir);
    // The cut's listing is on its way while the folder is scanned and its changed files hashed.
    const cut = client.cuts.get(cutId, { latest: true }).then((found) => remoteFiles(found.files));
    cut.catch(() => undefined); // awaited below; a failure while the folder is scanned is not left unhandled
    const scan = await scanFolder(dir, await ignoreRules(dir));
    const [remote, { files, hashed }] = await Promise.all([cut, localState(dir, scan.files, manifest?.files ?? {}, options.jobs, hashNeeded(scan.files, manifest, cut))]);
    return { lock, folder, manifest, local: files, symlinks: scan.symlinks, ignored: scan.ignored, remote, hashed };
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

/**
 * Which local files the plans need the sha256 of: those the last run knew or the cut holds a file at. A file new
 * on both sides is uploaded (push) or left alone (pull) whatever its bytes, unless a path the last run knew is gone
 * from the folder: then a new path with the same bytes is a rename, which only its hash tells.
 */
function hashNeeded(scanned: readonly ScannedFile[], manifest: Manifest | null, remote: Promise<RemoteFile[]>): (file: ScannedFile) => boolean | Promise<boolean> {
  const recorded = new Set(Object.keys(manifest?.files ?? {}).map(pathKey));
  const here = new Set(scanned.map((file) => pathKey(file.path)));
  const somethingGone = [...recorded].some((key) => !here.has(key));
  // Only a file the last run did not know waits for the cut's listing; a changed one is hashed at once.
  const onCut = remote.then((files) => new Set(files.map((file) => pathKey(file.path))));
  onCut.catch(() => undefined); // a failed listing is reported where readFolder awaits it
  return (file) => somethingGone || recorded.has(pathKey(file.path)) || onCut.then((keys) => keys.has(pathKey(file.path)));
}

/**
 * The cut's latest versions at their paths. A file uploaded without a path lands at `<display name>.<ext>` (a
 * `/`, `\` or `:` in the name written `_`) unless a file with a path (or an earlier one of these) holds it.
 */
export function remoteFiles(latest: readonly FileRecord[]): RemoteFile[] {
  const taken = new Set(latest.flatMap((file) => (file.path === null ? [] : [pathKey(file.path)])));
  const files: RemoteFile[] = [];
  for (const file of latest) {
    let where = file.path;
    if (where === null) {
      const extension = path.extname(file.url);
      const name = file.name.replace(/[/\\:]/g, '_');
      const candidate = name.toLowerCase().endsWith(extension.toLowerCase()) ? name : `${name}${extension}`;
      if (taken.has(pathKey(candidate))) continue;
      taken.add(pathKey(candidate));
      where = candidate;
    }
    files.push({ path: where, fileId: file.id, series: file.series.id, version: file.series.version, sha256: file.sha256, size: file.size });
  }
  return files;
}
