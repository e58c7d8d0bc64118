import type { Writable } from 'node:stream';
import type { BlobReader } from './store/index.js';

/**
 * Bytes read from the store and written to the socket per step (the local store's read stream reads as
 * much), and how many such buffers a response has. 64 KiB steps cost an archive about a fifth more CPU per
 * byte (docs/benchmarks.md).
 */
const CHUNK_BYTES = 256 * 1024;
const BUFFERS = 3;

/**
 * Writes stored bytes into a response through a few buffers that serve the whole response, each read into
 * again only once the socket has taken its previous bytes (the write's callback); with more than two, the
 * next chunk waits in the response while the socket sends one, as with a piped stream. A read stream
 * allocates a new buffer per chunk instead, memory outside the heap that only a garbage collection gives
 * back; in this server's heap those collections were full ones, up to a third of a download's CPU
 * (docs/benchmarks.md). Downloads, archives (one writer across all their entries) and marker exports write
 * through it. Once the client has left, nothing more is read or written and nothing fails.
 */
export class ResponseWriter {
  /** Made as they are first needed, no larger than the bytes asked for then: an avatar takes one small buffer. */
  private readonly buffers: Buffer[] = [];
  /** The last write from each buffer. */
  private readonly writes: (Promise<Error | null> | undefined)[] = [];
  private step = 0;
  private left = false;

  constructor(private readonly out: Writable) {
    out.once('close', () => {
      this.left = true;
    });
  }

  /** The response closed before its end: the client left (or the writer failed it). */
  get closed(): boolean {
    return this.left;
  }

  /**
   * Writes the next `length` bytes of `reader`, handing each chunk to `onChunk` as it goes (an archive's
   * CRC-32). Rejects when the reader ends before `length` bytes, or a write fails.
   */
  async copy(reader: BlobReader, length: number, onChunk?: (chunk: Buffer) => void): Promise<void> {
    for (let done = 0; done < length && !this.left; ) {
      const slot = this.step++ % BUFFERS;
      await sent(this.writes[slot]);
      const wanted = Math.min(CHUNK_BYTES, length - done);
      let buffer = this.buffers[slot];
      if (buffer === undefined || buffer.length < wanted) buffer = this.buffers[slot] = Buffer.allocUnsafeSlow(wanted);
      const bytesRead = await reader.read(buffer.length > wanted ? buffer.subarray(0, wanted) : buffer);
      if (bytesRead === 0) throw new Error(`the stored bytes end at byte ${done}, before the ${length} their record names`);
      if (this.left) return;
      const chunk = buffer.subarray(0, bytesRead);
      this.writes[slot] = write(this.out, chunk);
      // After the write: the socket sends the chunk while it is looked at (the buffer waits for both).
      onChunk?.(chunk);
      done += bytesRead;
    }
  }

  /** Writes bytes made for the answer (records, a made file): they are not lent, so nothing waits for them. */
  write(bytes: Buffer): void {
    if (!this.left) this.out.write(bytes);
  }

  /** Ends the response once the socket has taken every lent buffer's bytes. */
  async end(): Promise<void> {
    for (const written of this.writes) await sent(written);
    if (!this.left) this.out.end();
  }
}

/**
 * Resolves once the socket has taken `chunk` (with the write's error, if it failed), or the response is
 * closed without it. It never rejects: it is awaited only after the next read, and a rejection nobody
 * awaits yet is an unhandled one.
 */
function write(out: Writable, chunk: Buffer): Promise<Error | null> {
  return new Promise((resolve) => {
    const onClose = () => resolve(null);
    out.once('close', onClose);
    out.write(chunk, (error) => {
      out.off('close', onClose);
      resolve(error ?? null);
    });
  });
}

async function sent(written: Promise<Error | null> | undefined): Promise<void> {
  const error = await written;
  if (error) throw error;
}
