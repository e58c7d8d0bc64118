// What push and pull share: the folder locked, its manifest checked against the cut, its files scanned and
// hashed where they changed, and the cut's latest files by path.
import path from 'node:path';
import type { BandClient, FileRecord } from '@bandcollab/sdk';
import { localState, type LocalFile } from './changes.js';
import { lockFolder, type FolderLock } from './lock.js';
import { checkManifestTarget, type Manifest, readManifest } from './manifest.js';
import { pathKey } from './paths.js';
import type { RemoteFile } from './plan.js';
import { ignoreRules, scanFolder } from './scan.js';

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
  manifest: Manifest | null;
  local: LocalFile[];
  symlinks: string[];
  remote: RemoteFile[];
  /** How many local files were read to hash them. */
  hashed: number;
}

/** Locks `dir` (unless a dry run), then reads both sides. The caller releases the lock. */
export async function readFolder(client: BandClient, server: string, cutId: string, dir: string, options: SessionOptions): Promise<FolderState> {
  const lock = options.dryRun ? undefined : await lockFolder(dir);
  try {
    const manifest = await readManifest(dir);
    if (manifest) checkManifestTarget(manifest, server, cutId, dir);
    const [scan, cut] = await Promise.all([scanFolder(dir, await ignoreRules(dir)), client.cuts.get(cutId, { latest: true })]);
    const { files, hashed } = await localState(dir, scan.files, manifest?.files ?? {}, options.jobs);
    return { lock, manifest, local: files, symlinks: scan.symlinks, remote: remoteFiles(cut.files), hashed };
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

/**
 * The cut's latest versions at their paths. A file uploaded without a path lands at `<display name>.<ext>`
 * unless a file with a path (or an earlier one of these) holds it.
 */
export function remoteFiles(latest: readonly FileRecord[]): RemoteFile[] {
  const taken = new Set(latest.flatMap((file) => (file.path === null ? [] : [pathKey(file.path)])));
  const files: RemoteFile[] = [];
  for (const file of latest) {
    let where = file.path;
    if (where === null) {
      const extension = path.extname(file.url);
      const name = file.name.replace(/[/\\]/g, '_');
      const candidate = name.toLowerCase().endsWith(extension.toLowerCase()) ? name : `${name}${extension}`;
      if (taken.has(pathKey(candidate))) continue;
      taken.add(pathKey(candidate));
      where = candidate;
    }
    files.push({ path: where, fileId: file.id, series: file.series.id, version: file.series.version, sha256: file.sha256, size: file.size });
  }
  return files;
}
