// An M4A whose index (the `moov` box) follows its audio (`mdat`), as ffmpeg and most encoders write it
// unless told to "faststart", cannot be decoded from the front without holding all the audio until the
// index arrives: @audio/decode-aac then buffers the whole file. So, for a file on disk, the index is read
// first and the file streamed in faststart order (ftyp, moov, the rest), the index's chunk offsets moved
// by the index's size, exactly as qt-faststart does on disk. The boxes' headers are read through a BoundedReader,
// the index and the audio as ranges of the stored object.
import { Readable } from 'node:stream';
import { BoundedReader, type ReadBudget, ReadBudgetExceeded } from '../core/bounded-reader.js';
import type { ObjectSource } from '../core/store/index.js';
import { AnalysisError } from './decoded.js';

interface Box {
  type: string;
  start: number;
  size: number;
}

const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl']);
const MAX_MOOV_BYTES = 64 * 1024 * 1024;
/**
 * Real M4As have a handful of top-level boxes (ftyp, moov, mdat, free, udta); a file of empty 8-byte boxes
 * has a million per 8 MB.
 */
const MAX_TOP_LEVEL_BOXES = 10_000;

/**
 * What walking the top-level boxes up to the index may cost: they are a handful (ftyp, free, mdat, moov), each
 * large one followed by one more read.
 */
const M4A_READ_BUDGET: ReadBudget = { windowBytes: 64 * 1024, maxReads: 16 };

/** The file's bytes in faststart order: unchanged when its `moov` already precedes its `mdat`. */
export async function m4aInStreamingOrder(source: ObjectSource): Promise<Readable> {
  const boxes = await boxesToIndex(new BoundedReader(source, M4A_READ_BUDGET));
  const moov = boxes.at(-1);
  if (moov?.type !== 'moov' || !boxes.some((box) => box.type === 'mdat')) return source.read();
  const { start: moovStart, size: moovSize } = moov;
  if (moovSize > MAX_MOOV_BYTES) throw new AnalysisError(`M4A index of ${moovSize} bytes`);

  const index = await readRange(source, moovStart, moovSize);
  // The index goes right after ftyp (or first): what lay between there and the index moves by its size.
  const insertAt = boxes[0]!.type === 'ftyp' ? boxes[0]!.size : 0;
  shiftChunkOffsets(index, 8, index.length, (offset) => (offset >= insertAt && offset < moovStart ? offset + moovSize : offset));
  const range = async function* (start: number, end: number): AsyncGenerator<Buffer> {
    if (end > start) for await (const chunk of await source.read({ start, end: end - 1 })) yield chunk as Buffer;
  };
  async function* ordered(): AsyncGenerator<Buffer> {
    yield* range(0, insertAt);
    yield index;
    yield* range(insertAt, moovStart);
    yield* range(moovStart + moovSize, source.size);
  }
  return Readable.from(ordered(), { objectMode: false });
}

/**
 * The top-level boxes from the start up to the index (`moov`, last) or to the end of a file without one; only
 * their headers are read.
 */
async function boxesToIndex(reader: BoundedReader): Promise<Box[]> {
  const fileSize = reader.size;
  const boxes: Box[] = [];
  try {
    for (let start = 0; start + 8 <= fileSize; ) {
      const header = Buffer.alloc(16);
      (await reader.read(start, 16)).copy(header);
      let size = header.readUInt32BE(0);
      if (size === 1) size = Number(header.readBigUInt64BE(8));
      else if (size === 0) size = fileSize - start;
      if (size < 8) throw new AnalysisError(`M4A box of ${size} bytes at ${start}`);
      if (boxes.length === MAX_TOP_LEVEL_BOXES) throw new AnalysisError(`an M4A of more than ${MAX_TOP_LEVEL_BOXES} top-level boxes`);
      const box = { type: header.toString('latin1', 4, 8), start, size: Math.min(size, fileSize - start) };
      boxes.push(box);
      if (box.type === 'moov') break;
      start += size;
    }
  } catch (error) {
    if (error instanceof ReadBudgetExceeded) throw new AnalysisError(`M4A boxes before the index: ${error.message}`);
    throw error;
  }
  return boxes;
}

/** `length` bytes from `start`: one ranged read of the stored object (the index, up to MAX_MOOV_BYTES). */
async function readRange(source: ObjectSource, start: number, length: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await source.read({ start, end: start + length - 1 })) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Rewrites every stco/co64 entry inside the boxes of buffer[from, to) through `shift`. */
function shiftChunkOffsets(buffer: Buffer, from: number, to: number, shift: (offset: number) => number): void {
  for (let at = from; at + 8 <= to; ) {
    const size = buffer.readUInt32BE(at);
    const type = buffer.toString('latin1', at + 4, at + 8);
    if (size < 8 || at + size > to) throw new AnalysisError(`malformed M4A index box "${type}"`);
    if (CONTAINERS.has(type)) shiftChunkOffsets(buffer, at + 8, at + size, shift);
    else if (type === 'stco' || type === 'co64') {
      const count = buffer.readUInt32BE(at + 12);
      const width = type === 'stco' ? 4 : 8;
      if (16 + count * width > size) throw new AnalysisError(`malformed M4A "${type}" box`);
      for (let i = 0; i < count; i += 1) {
        const entry = at + 16 + i * width;
        if (width === 4) {
          const moved = shift(buffer.readUInt32BE(entry));
          if (moved > 0xffffffff) throw new AnalysisError('M4A chunk offsets overflow 32 bits once the index moves');
          buffer.writeUInt32BE(moved, entry);
        } else buffer.writeBigUInt64BE(BigInt(shift(Number(buffer.readBigUInt64BE(entry)))), entry);
      }
    }
    at += size;
  }
}
