// Which local files changed since the last run: a file whose size and mtime are those the manifest recorded
// keeps the recorded sha256 and is not read; any other is read once, to hash it, unless no rule needs its hash.
import path from 'node:path';
import { sha256OfFile } from '../file-hash.js';
import type { ManifestEntry } from './manifest.js';
import type { ScannedFile } from './scan.js';

export interface LocalFile extends ScannedFile {
  /**
   * Absent when the plan needs no hash of it: a file new on both sides, which is uploaded as it is (its upload
   * hashes it: the record brings the sha256), so a first push reads each file once.
   */
  sha256?: string;
}

export interface LocalState {
  files: LocalFile[];
  /** How many files were read to hash them (the others kept the manifest's sha256). */
  hashed: number;
}

/** The sha256 of every scanned file `needsHash` asks for, `jobs` files hashed at a time. */
export async function localState(
  dir: string,
  scanned: readonly ScannedFile[],
  recorded: Readonly<Record<string, ManifestEntry>>,
  jobs: number,
  needsHash: (file: ScannedFile) => boolean | Promise<boolean>,
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
      } else if (!(await needsHash(file))) {
        files[index] = { ...file };
      } else {
        hashed += 1;
        files[index] = { ...file, sha256: await hashFile(path.join(dir, file.path)) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, scanned.length)) }, worker));
  return { files, hashed };
}
