// A streaming WAV (RIFF/WAVE) decoder, written here because the npm WAV decoders want the whole file in
// memory. PCM 8/16/24/32-bit integer and 32/64-bit float, plain or WAVE_FORMAT_EXTENSIBLE.
import { AnalysisError, type DecodedChunk, type StreamDecoder } from './decoded.js';

const FORMAT_PCM = 1;
const FORMAT_FLOAT = 3;
const FORMAT_EXTENSIBLE = 0xfffe;
/** What ffmpeg and others write as the data size when they stream and cannot seek back. */
const UNKNOWN_SIZE = 0xffffffff;
/** Headers longer than this are not a WAV file (ffmpeg's are < 100 bytes; big LIST chunks stay far below). */
const MAX_HEADER_BYTES = 1 << 20;

export interface WavFormat {
  float: boolean;
  bitDepth: number;
  channels: number;
  sampleRate: number;
  /** Bytes of sample data the header announces, or null when it says "unknown". */
  dataBytes: number | null;
}

export class WavDecoder implements StreamDecoder {
  private header: WavHeaderReader | null = new WavHeaderReader();
  private pending = Buffer.alloc(0);
  format: WavFormat | null = null;
  private dataSeen = 0;

  decode(chunk: Uint8Array): DecodedChunk | null {
    if (this.header) {
      const parsed = this.header.push(chunk);
      if (!parsed) return null;
      this.format = parsed.format;
      chunk = parsed.samples;
      this.header = null;
    }
    const format = this.format!;
    if (format.dataBytes !== null) {
      // Trailing chunks (LIST, id3) after the sample data are not audio.
      const left = format.dataBytes - this.dataSeen;
      if (chunk.length > left) chunk = chunk.subarray(0, Math.max(0, left));
    }
    this.dataSeen += chunk.length;
    const bytes = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    const frameBytes = (format.bitDepth / 8) * format.channels;
    const frames = Math.floor(bytes.length / frameBytes);
    this.pending = Buffer.from(bytes.subarray(frames * frameBytes));
    return { channelData: toFloat(bytes, frames, format), sampleRate: format.sampleRate };
  }

  finish(): DecodedChunk | null {
    if (this.header) throw new AnalysisError('no "data" chunk in the WAV header');
    const format = this.format!;
    if (format.dataBytes !== null && this.dataSeen < format.dataBytes) {
      throw new AnalysisError(`truncated WAV: the header announces ${format.dataBytes} bytes of audio, the file holds ${this.dataSeen}`);
    }
    return null;
  }
}

const RIFF = 0x52494646; // "RIFF"
const WAVE = 0x57415645; // "WAVE"
const FMT = 0x666d7420; // "fmt "
const DATA = 0x64617461; // "data"

/**
 * A WAV header read as it arrives, in pieces of any size. It keeps only the bytes it has not walked past (a
 * chunk it skips is not kept), so each byte is looked at once: a hostile file of a million empty chunks, or
 * a header grown piece by piece, would otherwise cost seconds of CPU in copies and walks from its start.
 */
export class WavHeaderReader {
  /** Bytes from `dropped` on: the chunk header or "fmt " chunk being read. */
  private kept: Buffer = Buffer.alloc(0);
  private dropped = 0;
  /** Where the next chunk starts, counted from the first kept byte; past the kept bytes while a chunk is skipped. */
  private next = 12;
  private fmt: Omit<WavFormat, 'dataBytes'> | null = null;

  /** The format and the first sample bytes once the "data" chunk begins; null while the header goes on. */
  push(piece: Uint8Array): { format: WavFormat; samples: Buffer } | null {
    const bytes = Buffer.from(piece.buffer, piece.byteOffset, piece.length);
    const isFirst = this.dropped === 0 && this.kept.length < 12;
    this.kept = this.kept.length === 0 ? bytes : Buffer.concat([this.kept, bytes]);
    if (isFirst) {
      if (this.kept.length < 12) return null;
      if (this.kept.readUInt32BE(0) !== RIFF || this.kept.readUInt32BE(8) !== WAVE) throw new AnalysisError('not a RIFF/WAVE file');
    }
    while (this.next + 8 <= this.kept.length) {
      const id = this.kept.readUInt32BE(this.next);
      const size = this.kept.readUInt32LE(this.next + 4);
      if (id === DATA) {
        if (!this.fmt) throw new AnalysisError('the WAV "data" chunk comes before its "fmt " chunk');
        return { format: { ...this.fmt, dataBytes: size === UNKNOWN_SIZE ? null : size }, samples: this.kept.subarray(this.next + 8) };
      }
      if (id === FMT) {
        if (this.next + 8 + size > this.kept.length) break;
        this.fmt = parseFmt(this.kept.subarray(this.next + 8, this.next + 8 + size));
      }
      this.next += 8 + size + (size % 2);
    }
    const walked = Math.min(this.next, this.kept.length);
    // A copy: a view would pin the whole piece it came from.
    this.kept = Buffer.from(this.kept.subarray(walked));
    this.next -= walked;
    this.dropped += walked;
    if (this.dropped + this.kept.length > MAX_HEADER_BYTES) throw new AnalysisError('no "data" chunk in the WAV header');
    return null;
  }
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
