// How a parser reads the structure of a stored file (a WAV's chunk headers for the marker export, an M4A's boxes
// for the analysis): small pieces at any offset, served from a few windows of the file, each window one ranged
// read of the store, within a budget of reads. A hostile file costs at most that budget, whatever its chunks
// announce: a chunk of 400 MiB is never read (only its header), 10,000 chunks of 8 bytes are two reads, and a
// piece larger than a window is refused rather than allocated.
import type { ObjectSource } from './store/index.js';

/** What a parser may cost: `maxReads` store reads of `windowBytes` each, so at most their product in memory. */
export interface ReadBudget {
  windowBytes: number;
  maxReads: number;
}

/** The file's structure lies beyond what its parser may read: the request is refused (400), the analysis fails. */
export class ReadBudgetExceeded extends Error {}

interface Window {
  start: number;
  bytes: Buffer;
}

export class BoundedReader {
  private readonly windows: Window[] = [];

  constructor(
    private readonly source: ObjectSource,
    private readonly budget: ReadBudget,
  ) {}

  get size(): number {
    return this.source.size;
  }

  /** Store reads made so far. */
  get reads(): number {
    return this.windows.length;
  }

  /**
   * `length` bytes at `offset` (fewer only at the file's end), from a window read earlier or from one more read
   * of the store. The answer is a view of the window: copy what is kept beyond the parse.
   */
  async read(offset: number, length: number): Promise<Buffer> {
    const { windowBytes, maxReads } = this.budget;
    if (length > windowBytes) throw new ReadBudgetExceeded(`a piece of ${length} bytes at ${offset}, more than the ${windowBytes} read at once`);
    const end = Math.min(offset + length, this.size);
    if (end <= offset) return Buffer.alloc(0);
    const held = this.cached(offset, end);
    if (held) return held;
    if (this.windows.length === maxReads) throw new ReadBudgetExceeded(`the file's structure is spread wider than ${maxReads} reads of ${windowBytes} bytes`);
    const bytes = await readRange(this.source, offset, Math.min(windowBytes, this.size - offset));
    this.windows.push({ start: offset, bytes });
    return bytes.subarray(0, end - offset);
  }

  /** Bytes [from, to) when one window read already holds them all, else null (no read is made). */
  cached(from: number, to: number): Buffer | null {
    const window = this.windows.find((held) => held.start <= from && to <= held.start + held.bytes.length);
    return window ? window.bytes.subarray(from - window.start, to - window.start) : null;
  }
}

async function readRange(source: ObjectSource, start: number, length: number): Promise<Buffer> {
  const bytes = Buffer.alloc(length);
  let filled = 0;
  for await (const chunk of await source.read({ start, end: start + length - 1 })) {
    filled += (chunk as Buffer).copy(bytes, filled);
    if (filled === length) break;
  }
  return filled === length ? bytes : bytes.subarray(0, filled);
}
