import type { Readable } from 'node:stream';
import type { BlobReader } from './blob-store.js';

/**
 * A stream's bytes as a BlobReader, each chunk copied into the lent buffers (what a driver without a
 * positioned read does: the S3 driver copies its GET's body the same way, dispatch-reader.ts). The copy pays for itself: a chunk copied is
 * dropped at once and dies young, where one handed to the socket stays referenced until the socket took it,
 * outlives a scavenge and is freed only by a full collection. Handing GetObject's chunks over instead ran
 * 14–18 full collections per 500 MiB download against 0–2 (back-to-back downloads, no upload between), at
 * half the server's MB per CPU-second (docs/benchmarks.md, "S3 storage (issue 27)").
 */
export function streamReader(stream: Readable): BlobReader {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  /** What is left of the last chunk after the buffer it was copied into was full. */
  let rest: Buffer | null = null;
  return {
    async read(buffer) {
      if (rest === null) {
        const next = await chunks.next();
        if (next.done) return 0;
        rest = next.value;
      }
      const copied = rest.copy(buffer, 0, 0, Math.min(rest.length, buffer.length));
      rest = copied < rest.length ? rest.subarray(copied) : null;
      return copied;
    },
    async close() {
      stream.destroy();
    },
  };
}
