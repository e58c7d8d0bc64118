// A streaming WAV (RIFF/WAVE) decoder, written here because the npm WAV decoders want the whole file in
// memory. PCM 8/16/24/32-bit integer and 32/64-bit float, plain or WAVE_FORMAT_EXTENSIBLE; RIFF, RF64 and
// BW64 (what DAWs write past 4 GiB: the same chunks, their 64-bit sizes in a "ds64" chunk).
import { AnalysisError } from './decoded.js';
import { ChunkedHeaderReader, type PcmContainer, PcmDecoder } from './pcm.js';

const FORMAT_PCM = 1;
const FORMAT_FLOAT = 3;
const FORMAT_EXTENSIBLE = 0xfffe;
/** What ffmpeg and others write as the data size when they stream and cannot seek back. */
const UNKNOWN_SIZE = 0xffffffff;

export interface WavFormat {
  float: boolean;
  bitDepth: number;
  channels: number;
  sampleRate: number;
  /** Bytes of sample data the header announces, or null when it says "unknown". */
  dataBytes: number | null;
}

/** The RIFF/WAVE container: a "data" chunk of little-endian samples. */
const WAV: PcmContainer<WavFormat> = {
  name: 'WAV',
  header: () => new WavHeaderReader(),
  dataBytes: (format) => format.dataBytes,
  toFloat,
};

export class WavDecoder extends PcmDecoder<WavFormat> {
  constructor() {
    super(WAV);
  }
}

/**
 * The forms of a WAVE file: RIFF, and RF64 (EBU Tech 3306) and BW64 (ITU-R BS.2088), whose chunk sizes of
 * 0xFFFFFFFF stand for the 64-bit sizes their "ds64" chunk, the first after the header, holds.
 */
export const WAV_FORMS = ['RIFF', 'RF64', 'BW64'] as const;
export type WavForm = (typeof WAV_FORMS)[number];
export const isWavForm = (form: string): form is WavForm => (WAV_FORMS as readonly string[]).includes(form);

/** The sizes of an RF64/BW64 file: the RIFF's and the "data" chunk's, the sample frames, any other large chunk's by id. */
export interface Ds64 {
  riffSize: number;
  dataSize: number;
  sampleCount: number;
  table: Map<string, number>;
}

/** A "ds64" chunk's payload; null when it is too short to hold the three sizes. */
export function parseDs64(payload: Buffer): Ds64 | null {
  if (payload.length < 24) return null;
  const table = new Map<string, number>();
  const entries = payload.length >= 28 ? payload.readUInt32LE(24) : 0;
  for (let i = 0, at = 28; i < entries && at + 12 <= payload.length; i += 1, at += 12) {
    table.set(payload.toString('latin1', at, at + 4), Number(payload.readBigUInt64LE(at + 4)));
  }
  return { riffSize: Number(payload.readBigUInt64LE(0)), dataSize: Number(payload.readBigUInt64LE(8)), sampleCount: Number(payload.readBigUInt64LE(16)), table };
}

const WAVE = 0x57415645; // "WAVE"
const FMT = 0x666d7420; // "fmt "
const DATA = 0x64617461; // "data"
const DS64 = 0x64733634; // "ds64"

/** A WAV header: the "fmt " chunk gives the format, the "data" chunk's start the first sample. */
export class WavHeaderReader extends ChunkedHeaderReader<WavFormat> {
  private fmt: Omit<WavFormat, 'dataBytes'> | null = null;
  /** RF64 or BW64: sizes of 0xFFFFFFFF are in `ds64`. */
  private sizesInDs64 = false;
  private ds64: Ds64 | null = null;

  constructor() {
    super('no "data" chunk in the WAV header');
  }

  protected checkFileHeader(start: Buffer): void {
    const form = start.toString('latin1', 0, 4);
    if (!isWavForm(form) || start.readUInt32BE(8) !== WAVE) throw new AnalysisError('not a RIFF/WAVE file');
    this.sizesInDs64 = form !== 'RIFF';
  }

  protected walk(): { format: WavFormat; samples: Buffer } | null {
    while (this.next + 8 <= this.kept.length) {
      const id = this.kept.readUInt32BE(this.next);
      const size = this.kept.readUInt32LE(this.next + 4);
      if (id === DATA) {
        if (!this.fmt) throw new AnalysisError('the WAV "data" chunk comes before its "fmt " chunk');
        const dataBytes = size !== UNKNOWN_SIZE ? size : this.sizesInDs64 ? this.requireDs64().dataSize : null;
        return { format: { ...this.fmt, dataBytes }, samples: this.kept.subarray(this.next + 8) };
      }
      if (id === FMT || (id === DS64 && this.sizesInDs64)) {
        if (this.next + 8 + size > this.kept.length) break;
        const payload = this.kept.subarray(this.next + 8, this.next + 8 + size);
        if (id === FMT) this.fmt = parseFmt(payload);
        else this.ds64 = parseDs64(payload) ?? fail('RF64 "ds64" chunk too short');
      }
      const length = size === UNKNOWN_SIZE && this.sizesInDs64 ? this.sizeInTable(this.kept.toString('latin1', this.next, this.next + 4)) : size;
      this.next += 8 + length + (length % 2);
    }
    return null;
  }

  private requireDs64(): Ds64 {
    return this.ds64 ?? fail('an RF64 file without its "ds64" chunk before "data"');
  }

  private sizeInTable(id: string): number {
    return this.requireDs64().table.get(id) ?? fail(`the RF64 chunk "${id}" has no size in "ds64"`);
  }
}

function fail(reason: string): never {
  throw new AnalysisError(reason);
}

function parseFmt(chunk: Buffer): Omit<WavFormat, 'dataBytes'> {
  if (chunk.length < 16) throw new AnalysisError('WAV "fmt " chunk too short');
  let tag = chunk.readUInt16LE(0);
  const channels = chunk.readUInt16LE(2);
  const sampleRate = chunk.readUInt32LE(4);
  const blockAlign = chunk.readUInt16LE(12);
  const bitDepth = chunk.readUInt16LE(14);
  if (tag === FORMAT_EXTENSIBLE) {
    if (chunk.length < 26) throw new AnalysisError('WAV extensible "fmt " chunk too short');
    tag = chunk.readUInt16LE(24);
  }
  const float = tag === FORMAT_FLOAT;
  if (tag !== FORMAT_PCM && !float) throw new AnalysisError(`unsupported WAV format tag ${tag}`);
  const depths = float ? [32, 64] : [8, 16, 24, 32];
  if (!depths.includes(bitDepth)) throw new AnalysisError(`unsupported WAV bit depth ${bitDepth}`);
  if (channels < 1 || channels > 32) throw new AnalysisError(`implausible WAV channel count ${channels}`);
  if (sampleRate < 1000 || sampleRate > 768_000) throw new AnalysisError(`implausible WAV sample rate ${sampleRate}`);
  if (blockAlign !== (bitDepth / 8) * channels) {
    throw new AnalysisError(`WAV block align ${blockAlign} does not match ${channels} channels of ${bitDepth} bits`);
  }
  return { float, bitDepth, channels, sampleRate };
}

function toFloat(bytes: Buffer, frames: number, format: WavFormat): Float32Array[] {
  const { channels, bitDepth, float } = format;
  const width = bitDepth / 8;
  const out = Array.from({ length: channels }, () => new Float32Array(frames));
  for (let channel = 0; channel < channels; channel += 1) {
    const target = out[channel]!;
    let at = channel * width;
    const stride = channels * width;
    for (let frame = 0; frame < frames; frame += 1, at += stride) {
      if (float) target[frame] = bitDepth === 32 ? bytes.readFloatLE(at) : bytes.readDoubleLE(at);
      else if (bitDepth === 16) target[frame] = bytes.readInt16LE(at) / 32768;
      else if (bitDepth === 24) target[frame] = (((bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16)) << 8) >> 8) / 8388608;
      else if (bitDepth === 32) target[frame] = bytes.readInt32LE(at) / 2147483648;
      else target[frame] = (bytes[at]! - 128) / 128;
    }
  }
  return out;
}
