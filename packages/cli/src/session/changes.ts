// Which local files changed since the last run: a file whose size and mtime are those the manifest recorded
// keeps the recorded sha256 and is not read; any other is read once, to hash it.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ManifestEntry } from './manifest.js';
import type { ScannedFile } from './scan.js';

export interface LocalFile extends ScannedFile {
  sha256: string;
}

export interface LocalState {
  files: LocalFile[];
  /** How many files were read to hash them (the others kept the manifest's sha256). */
  hashed: number;
}

/** The hex sha256 of a file's bytes, as the server records it. */
export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** The sha256 of every scanned file, `jobs` files hashed at a time. */
export async function localState(
  dir: string,
  scanned: readonly ScannedFile[],
  recorded: Readonly<Record<string, ManifestEntry>>,
  jobs: number,
  hashFile: (file: string) => Promise<string> = sha256OfFile,
): Promise<LocalState> {
  const files: LocalFile[] = new Array(scanned.length);
  let hashed = 0;
  let next = 0;
  const worker = async () => {
    while (next < scanned.length) {
      const index = next++;
      const file = scanned[index]!;
      const entry = Object.hasOwn(recorded, file.path) ? recorded[file.path] : undefined;
      if (entry && entry.size === file.size && entry.mtimeMs === file.mtimeMs) {
        files[index] = { ...file, sha256: entry.sha256 };
      } else {
        hashed += 1;
        files[index] = { ...file, sha256: await hashFile(path.join(dir, file.path)) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, scanned.length)) }, worker));
  return { files, hashed };
}
