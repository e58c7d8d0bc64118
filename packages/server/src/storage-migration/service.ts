import { createHash } from 'node:crypto';
import { appendFile, readFile } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { type BlobStore, ObjectMissing, sha256Of } from '../core/store/index.js';
import type { RecordedObject } from './repository.js';

/** What one run did; `mismatched` and `missing` name keys. */
export interface MigrationReport {
  copied: number;
  /** Already in the bucket with the right bytes (a run before this one copied them). */
  present: number;
  /** The local bytes do not hash to the database's sha256, or the bucket's copy did not: nothing recorded for them. */
  mismatched: string[];
  /** No local bytes (deleted since they were listed, or lost before). */
  missing: string[];
}

/**
 * Copies stored objects from one store (the local directory) into another (the bucket) under the same keys,
 * verifying each by its sha256: the source bytes as they stream out (against the database's hash), then the
 * copy read back from the target (what a corrupting store, STACK.md's checksum trailer, would have broken).
 * It only reads the source and only adds to the target, so a server serving from the source is not disturbed.
 * Each verified key is appended to a progress file (one JSON line, naming the target) the moment it is
 * verified, so an interrupted run resumes: a recorded key whose object still has the source's size is skipped;
 * an object present but unrecorded (the run died between copy and record) is hashed, not copied again.
 */
export class StorageMigration {
  constructor(
    private readonly source: BlobStore,
    private readonly target: BlobStore,
    /** Names the target in the progress file: a run towards another bucket starts afresh. */
    private readonly targetName: string,
    private readonly progressFile: string,
    private readonly onObject: (key: string, outcome: 'copied' | 'present' | 'mismatched' | 'missing') => void,
  ) {}

  async run(objects: RecordedObject[]): Promise<MigrationReport> {
    const report: MigrationReport = { copied: 0, present: 0, mismatched: [], missing: [] };
    const recorded = await this.recorded();
    for (const object of objects) {
      const outcome = await this.migrate(object, recorded.get(object.key));
      if (outcome === 'copied' || outcome === 'present') report[outcome] += 1;
      else report[outcome].push(object.key);
      this.onObject(object.key, outcome);
    }
    return report;
  }

  private async migrate({ key, sha256 }: RecordedObject, recordedSha256: string | undefined): Promise<'copied' | 'present' | 'mismatched' | 'missing'> {
    const local = await this.source.head(key);
    if (!local) return 'missing';
    const there = await this.target.head(key);
    if (there?.size === local.size) {
      if (recordedSha256 !== undefined && (sha256 === null || recordedSha256 === sha256)) return 'present';
      const expected = sha256 ?? (await sha256Of(this.source, key));
      if ((await sha256Of(this.target, key)) === expected) {
        await this.record(key, expected);
        return 'present';
      }
    }
    let sent: string;
    try {
      sent = await this.copy(key);
    } catch (error) {
      if (error instanceof ObjectMissing) return 'missing';
      throw error;
    }
    const expected = sha256 ?? sent;
    if (sent !== expected || (await sha256Of(this.target, key)) !== expected) {
      await this.target.delete(key);
      return 'mismatched';
    }
    await this.record(key, expected);
    return 'copied';
  }

  /** Streams the object across, hashing the bytes on their way; answers their sha256. */
  private async copy(key: string): Promise<string> {
    const hash = createHash('sha256');
    const body = await this.source.read(key);
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    body.once('error', (error) => hashing.destroy(error));
    await this.target.write(key, body.pipe(hashing));
    return hash.digest('hex');
  }

  /** The keys verified in this target by earlier runs, with their sha256 (a torn last line is ignored). */
  private async recorded(): Promise<Map<string, string>> {
    const text = await readFile(this.progressFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    const keys = new Map<string, string>();
    for (const line of text.split('\n')) {
      try {
        const entry = JSON.parse(line) as { target: string; key: string; sha256: string };
        if (entry.target === this.targetName) keys.set(entry.key, entry.sha256);
      } catch {
        // The line a killed run was writing.
      }
    }
    return keys;
  }

  private async record(key: string, sha256: string): Promise<void> {
    await appendFile(this.progressFile, `${JSON.stringify({ target: this.targetName, key, sha256 })}\n`, { mode: 0o600 });
  }
}
