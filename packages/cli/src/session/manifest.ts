// `.band/manifest.json`: what a folder and its cut held after the last push or pull, so the next run knows
// what changed on each side without reading unchanged files or asking for their bytes.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import type { SafeFolder } from './safe-folder.js';

/** The folder band keeps its own state in (never pushed or pulled). */
export const STATE_DIR = '.band';

export interface ManifestEntry {
  /** The series the path belongs to, and its version both sides held. */
  series: string;
  version: number;
  sha256: string;
  /** The local file's size and mtime when its sha256 was taken: equal now, the file was not read again. */
  size: number;
  mtimeMs: number;
}

export interface Manifest {
  /** The server (its address) and the cut the folder mirrors. */
  server: string;
  cutId: string;
  /** By the path as the folder holds it (relative, POSIX). */
  files: Record<string, ManifestEntry>;
}

const FORMAT = 1;

export function manifestFile(dir: string): string {
  return path.join(dir, STATE_DIR, 'manifest.json');
}

/** The folder's manifest, or null when it has none (a first run). */
export async function readManifest(dir: string): Promise<Manifest | null> {
  let text: string;
  try {
    text = await readFile(manifestFile(dir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Manifest & { format: number };
    if (parsed.format !== FORMAT || typeof parsed.files !== 'object') throw new Error(`format ${parsed.format}`);
    return { server: parsed.server, cutId: parsed.cutId, files: parsed.files };
  } catch (error) {
    throw new CliError(`${manifestFile(dir)} is not a manifest band can read (${(error as Error).message}); move it away to start over`, EXIT.error);
  }
}

/** Do two manifests' files say the same (a run that changed nothing need not write it again)? */
export function sameFiles(before: Manifest['files'], after: Manifest['files']): boolean {
  const paths = Object.keys(after);
  if (paths.length !== Object.keys(before).length) return false;
  return paths.every((relative) => {
    const a = Object.hasOwn(before, relative) ? before[relative]! : undefined;
    const b = after[relative]!;
    return a !== undefined && a.series === b.series && a.version === b.version && a.sha256 === b.sha256 && a.size === b.size && a.mtimeMs === b.mtimeMs;
  });
}

/** Writes the manifest beside its place, then renames it there: a crash leaves the old one or the new one, whole. */
export async function writeManifest(folder: SafeFolder, manifest: Manifest): Promise<void> {
  const sorted = Object.fromEntries(Object.entries(manifest.files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  await folder.writeWhole(`${STATE_DIR}/manifest.json`, `${JSON.stringify({ format: FORMAT, server: manifest.server, cutId: manifest.cutId, files: sorted }, null, 2)}\n`);
}

/** A manifest of another server or cut: the folder mirrors something else (exit 2, naming both). */
export function checkManifestTarget(manifest: Manifest, server: string, cutId: string, dir: string): void {
  if (manifest.server !== server || manifest.cutId !== cutId) {
    throw usageError(
      `${dir} mirrors cut ${manifest.cutId} on ${manifest.server}, not cut ${cutId} on ${server}; use another folder (or remove ${path.join(dir, STATE_DIR)} to start over)`,
    );
  }
}
