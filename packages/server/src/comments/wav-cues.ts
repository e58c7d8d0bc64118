// The WAV marker export: the stored mix with a `cue ` chunk and a `LIST`/`adtl` chunk of labels added. Only
// the RIFF header's size fields change: every audio byte and every other chunk is passed through as stored,
// streamed from the file, so the answer's length is known before its first byte. It runs inside a request, so
// the chunk headers are read through a BoundedReader: a hostile file costs a few reads of the store, never
// memory in proportion to what its chunks announce.
import { BoundedReader, type ReadBudget, ReadBudgetExceeded } from '../core/bounded-reader.js';
import type { ObjectSource } from '../core/store/index.js';
import { type Ds64, isWavForm, parseDs64, type WavForm } from '../analysis/wav.js';
import { clockTime, type Marker, UnplaceableMarker } from './markers.js';

export interface RiffChunk {
  id: string;
  /** Where its 8-byte header starts. */
  offset: number;
  /** Its payload's length, as the file holds it (a `data` chunk of unknown or 64-bit size: what the file holds). */
  size: number;
  /** A LIST chunk's type (`INFO`, `adtl`…). */
  listType?: string;
}

export interface WavLayout {
  form: WavForm;
  chunks: RiffChunk[];
  sampleRate: number;
  fileSize: number;
  /** RF64 and BW64 carry the real sizes in this chunk's payload, kept to be patched; null for RIFF. */
  ds64: Buffer | null;
}

export class NotAWav extends Error {}

/**
 * What reading a WAV's chunk headers may cost a request: 16 reads of 64 KiB (1 MiB at most). A real WAV's
 * headers are one read, plus one per large chunk (its audio, an embedded picture) that has another after it.
 */
export const WAV_READ_BUDGET: ReadBudget = { windowBytes: 64 * 1024, maxReads: 16 };
/** A hostile file of empty chunks must cost a bounded walk; real WAVs have a handful. */
const MAX_CHUNKS = 10_000;

/** The export of the stored WAV at `source` with `markers` as cue points; NotAWav when it cannot be made. */
export async function planWavExport(source: ObjectSource, markers: readonly Marker[]): Promise<WavExport> {
  const reader = new BoundedReader(source, WAV_READ_BUDGET);
  try {
    return wavWithCues(await readWavLayout(reader), markers, reader);
  } catch (error) {
    if (error instanceof ReadBudgetExceeded) throw new NotAWav(error.message);
    throw error;
  }
}

/** Walks the file's top-level chunks, reading only their headers (and the small `fmt `/`ds64` payloads). */
export async function readWavLayout(reader: BoundedReader): Promise<WavLayout> {
  const fileSize = reader.size;
  const head = await reader.read(0, 12);
  const form = head.toString('latin1', 0, 4);
  if (head.length < 12 || !isWavForm(form) || head.toString('latin1', 8, 12) !== 'WAVE') throw new NotAWav('not a RIFF/WAVE file');
  const chunks: RiffChunk[] = [];
  let sampleRate: number | null = null;
  let ds64: { payload: Buffer; sizes: Ds64 } | null = null;
  let offset = 12;
  while (offset + 8 <= fileSize) {
    if (chunks.length === MAX_CHUNKS) throw new NotAWav(`more than ${MAX_CHUNKS} chunks`);
    const header = await reader.read(offset, 12);
    const id = header.toString('latin1', 0, 4);
    let size = header.readUInt32LE(4);
    const available = fileSize - offset - 8;
    if (size === 0xffffffff && form !== 'RIFF') {
      // RF64, BW64: the chunk's size is in ds64, the first chunk.
      if (!ds64) throw new NotAWav(`an ${form} file without its "ds64" chunk before "${id}"`);
      const inDs64 = id === 'data' ? ds64.sizes.dataSize : ds64.sizes.table.get(id);
      if (inDs64 === undefined) throw new NotAWav(`the ${form} chunk "${id}" has no size in "ds64"`);
      size = id === 'data' ? Math.min(inDs64, available) : inDs64;
    } else if (id === 'data' && (size === 0xffffffff || size > available)) {
      // An unknown (streamed) size or a truncated file runs to what the file holds.
      size = available;
    }
    if (size > available) break; // a truncated trailing chunk that is not audio: left out
    const chunk: RiffChunk = { id, offset, size };
    if (id === 'LIST' && size >= 4) chunk.listType = header.toString('latin1', 8, 12);
    if (id === 'fmt ' && size >= 8) sampleRate = (await reader.read(offset + 8, 8)).readUInt32LE(4);
    if (id === 'ds64' && form !== 'RIFF' && chunks.length === 0) {
      const payload = Buffer.from(await reader.read(offset + 8, size));
      const sizes = parseDs64(payload);
      if (!sizes) throw new NotAWav(`the ${form} "ds64" chunk is too short`);
      ds64 = { payload, sizes };
    }
    chunks.push(chunk);
    offset += 8 + size + (size & 1);
  }
  if (form !== 'RIFF' && !ds64) throw new NotAWav(`an ${form} file without its "ds64" chunk`);
  if (sampleRate === null || sampleRate === 0) throw new NotAWav('no "fmt " chunk with a sample rate');
  if (!chunks.some((chunk) => chunk.id === 'data')) throw new NotAWav('no "data" chunk');
  return { form, chunks, sampleRate, fileSize, ds64: ds64?.payload ?? null };
}

/** A piece of the answer: bytes made here, or a range [from, to) of the stored file. */
export type Segment = { bytes: Buffer } | { from: number; to: number };

export interface WavExport {
  segments: Segment[];
  length: number;
}

/**
 * The answer's pieces: the RIFF header with its new size, every chunk of the source but its own `cue ` and
 * `LIST`/`adtl` (replaced), then the new `cue ` and `LIST`/`adtl` chunks. A cue point's `dwSampleOffset` is
 * its time in sample frames from the start of the `data` chunk; a region's length is an `ltxt` entry. The
 * source's pieces that `reader` already holds are answered from it, the rest are ranges of the stored file.
 */
export function wavWithCues(layout: WavLayout, markers: readonly Marker[], reader: BoundedReader): WavExport {
  const segments: Segment[] = [];
  for (const [index, chunk] of layout.chunks.entries()) {
    if (chunk.id === 'cue ' || (chunk.id === 'LIST' && chunk.listType === 'adtl')) continue;
    if (layout.ds64 && index === 0) continue; // the ds64 chunk, rewritten below once the length is known
    const padded = chunk.size + (chunk.size & 1);
    const stored = Math.min(padded, layout.fileSize - chunk.offset - 8);
    if (chunk.id === 'data') {
      segments.push({ bytes: chunkHeader('data', layout.ds64 ? 0xffffffff : chunk.size) });
    } else {
      segments.push({ from: chunk.offset, to: chunk.offset + 8 });
    }
    segments.push({ from: chunk.offset + 8, to: chunk.offset + 8 + stored });
    // A writer that leaves out the pad byte of an odd last chunk: the chunks added after it need it.
    if (stored < padded) segments.push({ bytes: Buffer.alloc(1) });
  }
  segments.push({ bytes: cueChunk(layout.sampleRate, markers) }, { bytes: adtlChunk(layout.sampleRate, markers) });

  const ds64Bytes = layout.ds64 ? 8 + layout.ds64.length + (layout.ds64.length & 1) : 0;
  const length = 12 + ds64Bytes + segments.reduce((sum, segment) => sum + segmentLength(segment), 0);
  const header = Buffer.alloc(12);
  header.write(layout.form, 0, 'latin1');
  header.writeUInt32LE(layout.ds64 ? 0xffffffff : length - 8, 4);
  header.write('WAVE', 8, 'latin1');
  const leading: Segment[] = [{ bytes: header }];
  if (layout.ds64) {
    const patched = Buffer.from(layout.ds64);
    patched.writeBigUInt64LE(BigInt(length - 8), 0);
    const data = layout.chunks.find((chunk) => chunk.id === 'data')!;
    patched.writeBigUInt64LE(BigInt(data.size), 8);
    leading.push({ bytes: Buffer.concat([chunkHeader('ds64', patched.length), patched, Buffer.alloc(patched.length & 1)]) });
  }
  return { segments: compacted([...leading, ...segments], reader), length };
}

/**
 * The same pieces with neighbouring ranges of the file joined, a range that one read of the walk holds turned
 * into its bytes, and neighbouring bytes joined: the answer then reads the store once per large chunk (its
 * audio), not once per chunk, however many small chunks the file holds.
 */
function compacted(segments: readonly Segment[], reader: BoundedReader): Segment[] {
  const ranges: Segment[] = [];
  for (const segment of segments) {
    const last = ranges.at(-1);
    if ('bytes' in segment || !last || 'bytes' in last || last.to !== segment.from) ranges.push(segment);
    else ranges[ranges.length - 1] = { from: last.from, to: segment.to };
  }
  const out: Segment[] = [];
  let held: Buffer[] = [];
  for (const segment of ranges) {
    const bytes = 'bytes' in segment ? segment.bytes : reader.cached(segment.from, segment.to);
    if (bytes !== null) {
      held.push(bytes);
      continue;
    }
    if (held.length > 0) out.push({ bytes: Buffer.concat(held) });
    held = [];
    out.push(segment);
  }
  if (held.length > 0) out.push({ bytes: Buffer.concat(held) });
  return out;
}

const segmentLength = (segment: Segment): number => ('bytes' in segment ? segment.bytes.length : segment.to - segment.from);

function chunkHeader(id: string, size: number): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(size, 4);
  return header;
}

/** The largest sample frame a cue point's `dwSampleOffset` (and a region's `ltxt` length) holds. */
const MAX_CUE_FRAME = 0xffffffff;

/**
 * The sample frame of a time; past MAX_CUE_FRAME (at 48 kHz 24:51:18, at 192 kHz 6:12:49) no RIFF cue can hold
 * it, RF64 included (it widens sizes, not cue points): UnplaceableMarker.
 */
function frameAt(ms: number, sampleRate: number): number {
  const frame = Math.round((ms * sampleRate) / 1000);
  if (frame > MAX_CUE_FRAME) {
    throw new UnplaceableMarker(
      `the marker at ${clockTime(ms)} is past the last sample frame a WAV cue point holds (2^32 − 1, ${clockTime((MAX_CUE_FRAME * 1000) / sampleRate)} at ${sampleRate} Hz): choose another format or a smaller offsetMs`,
    );
  }
  return frame;
}

/** A region's length in sample frames (its `ltxt` entry): its end may lie past frame 2^32 − 1, its length not. */
function regionFrames(atMs: number, endMs: number, sampleRate: number): number {
  const frames = Math.round((endMs * sampleRate) / 1000) - frameAt(atMs, sampleRate);
  if (frames > MAX_CUE_FRAME) {
    throw new UnplaceableMarker(`the range from ${clockTime(atMs)} to ${clockTime(endMs)} is longer than the 2^32 − 1 sample frames a WAV region holds at ${sampleRate} Hz: choose another format`);
  }
  return frames;
}

function cueChunk(sampleRate: number, markers: readonly Marker[]): Buffer {
  const body = Buffer.alloc(4 + 24 * markers.length);
  body.writeUInt32LE(markers.length, 0);
  markers.forEach((marker, index) => {
    const at = 4 + 24 * index;
    const frame = frameAt(marker.atMs, sampleRate);
    body.writeUInt32LE(index + 1, at); // dwName: the cue point's id, which the labels name
    body.writeUInt32LE(frame, at + 4); // dwPosition
    body.write('data', at + 8, 'latin1'); // fccChunk
    body.writeUInt32LE(0, at + 12); // dwChunkStart
    body.writeUInt32LE(0, at + 16); // dwBlockStart
    body.writeUInt32LE(frame, at + 20); // dwSampleOffset
  });
  return Buffer.concat([chunkHeader('cue ', body.length), body]);
}

function adtlChunk(sampleRate: number, markers: readonly Marker[]): Buffer {
  const labels = markers.map((marker, index) => {
    const text = Buffer.from(`${marker.name}\0`, 'utf8');
    const label = Buffer.alloc(4 + text.length);
    label.writeUInt32LE(index + 1, 0);
    text.copy(label, 4);
    return subchunk('labl', label);
  });
  const regions = markers.flatMap((marker, index) => {
    if (marker.endMs === null) return [];
    const region = Buffer.alloc(20);
    region.writeUInt32LE(index + 1, 0);
    region.writeUInt32LE(regionFrames(marker.atMs, marker.endMs, sampleRate), 4);
    region.write('rgn ', 8, 'latin1'); // dwPurposeID; country, language, dialect and code page stay 0
    return [subchunk('ltxt', region)];
  });
  // Every label before the first region: ffmpeg's reader, like other simple ones, stops at the first entry
  // that is not a label.
  const body = Buffer.concat([Buffer.from('adtl', 'latin1'), ...labels, ...regions]);
  return Buffer.concat([chunkHeader('LIST', body.length), body]);
}

function subchunk(id: string, payload: Buffer): Buffer {
  return Buffer.concat([chunkHeader(id, payload.length), payload, Buffer.alloc(payload.length & 1)]);
}
