import type { Readable } from 'node:stream';
import type { BlobReader } from './blob-store.js';

/**
 * A stream's bytes as a BlobReader, each chunk copied into the lent buffers (what a driver without a
 * positioned read does: the S3 driver reads a response body). The copy costs what the lent buffers save, so
 * it only gives such a driver the interface.
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
