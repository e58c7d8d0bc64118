// A streaming AIFF / AIFF-C decoder, written here as wav.ts is: music-metadata reads AIFF headers but not the
// samples, and the npm AIFF decoders want the whole file in memory. Integer PCM of 1 to 32 bits: big-endian
// (AIFF, and AIFF-C `NONE`) or little-endian (AIFF-C `sowt`, what Logic and ffmpeg write for 16-bit).
import { AnalysisError, type DecodedChunk, MAX_DURATION_SECONDS } from './decoded.js';
import type { Codec, FileDecoder } from './decoders.js';

/** Headers longer than this are not an AIFF file (a DAW's markers, comments and ID3 chunk stay far below). */
const MAX_HEADER_BYTES = 1 << 20;

const FORM = 0x464f524d; // "FORM"
const AIFF = 0x41494646; // "AIFF"
const AIFC = 0x41494643; // "AIFC"
const COMM = 0x434f4d4d; // "COMM"
const SSND = 0x53534e44; // "SSND"
const COMPRESSION_NONE = 0x4e4f4e45; // "NONE"
const COMPRESSION_SOWT = 0x736f7774; // "sowt"

export interface AiffFormat {
  bitDepth: number;
  channels: number;
  sampleRate: number;
  littleEndian: boolean;
  /** Sample frames the COMM chunk announces: the sound data holds exactly these. */
  frames: number;
}

export class AiffDecoder implements FileDecoder {
  private header: AiffHeaderReader | null = new AiffHeaderReader();
  private pending = Buffer.alloc(0);
  format: AiffFormat | null = null;
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
    const frameBytes = bytesPerSample(format.bitDepth) * format.channels;
    // Chunks after the sound data (ID3, markers written last) are not audio.
    const left = format.frames * frameBytes - this.dataSeen;
    if (chunk.length > left) chunk = chunk.subarray(0, Math.max(0, left));
    this.dataSeen += chunk.length;
    const bytes = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    const frames = Math.floor(bytes.length / frameBytes);
    this.pending = Buffer.from(bytes.subarray(frames * frameBytes));
    return { channelData: toFloat(bytes, frames, format), sampleRate: format.sampleRate };
  }

  finish(): DecodedChunk | null {
    if (this.header) throw new AnalysisError('no "SSND" chunk in the AIFF header');
    const format = this.format!;
    const expected = format.frames * bytesPerSample(format.bitDepth) * format.channels;
    if (this.dataSeen < expected) {
      throw new AnalysisError(`truncated AIFF: the header announces ${expected} bytes of audio, the file holds ${this.dataSeen}`);
    }
    return null;
  }

  codec(): Codec {
    return 'pcm';
  }

  bitDepth(): number | null {
    return this.format?.bitDepth ?? null;
  }
}

/**
 * An AIFF header read as it arrives, in pieces of any size, keeping only the bytes it has not walked past (as
 * WavHeaderReader does): the COMM chunk gives the format, the SSND chunk's start the first sample.
 */
export class AiffHeaderReader {
  private kept: Buffer = Buffer.alloc(0);
  private dropped = 0;
  /** Where the next chunk starts, counted from the first kept byte; past the kept bytes while a chunk is skipped. */
  private next = 12;
  private compressed = false;
  private comm: AiffFormat | null = null;
  /** Once the SSND chunk header is read: the bytes before its first sample (its offset field) still to skip. */
  private ssndSkip: number | null = null;

  push(piece: Uint8Array): { format: AiffFormat; samples: Buffer } | null {
    const bytes = Buffer.from(piece.buffer, piece.byteOffset, piece.length);
    const isFirst = this.dropped === 0 && this.kept.length < 12;
    this.kept = this.kept.length === 0 ? bytes : Buffer.concat([this.kept, bytes]);
    if (isFirst) {
      if (this.kept.length < 12) return null;
      const form = this.kept.readUInt32BE(8);
      if (this.kept.readUInt32BE(0) !== FORM || (form !== AIFF && form !== AIFC)) throw new AnalysisError('not an AIFF or AIFF-C file');
      this.compressed = form === AIFC;
    }
    while (this.next + 16 <= this.kept.length || (this.next + 8 <= this.kept.length && this.kept.readUInt32BE(this.next) !== SSND)) {
      const id = this.kept.readUInt32BE(this.next);
      const size = this.kept.readUInt32BE(this.next + 4);
      if (id === SSND) {
        if (!this.comm) throw new AnalysisError('the AIFF "SSND" chunk comes before its "COMM" chunk');
        // SSND: offset (bytes before the first sample), block size, then the sound data.
        const start = this.next + 16 + this.kept.readUInt32BE(this.next + 8);
        if (start > this.kept.length) break;
        return { format: this.comm, samples: this.kept.subarray(start) };
      }
      if (id === COMM) {
        if (this.next + 8 + size > this.kept.length) break;
        this.comm = parseComm(this.kept.subarray(this.next + 8, this.next + 8 + size), this.compressed);
      }
      this.next += 8 + size + (size % 2);
    }
    const walked = Math.min(this.next, this.kept.length);
    // A copy: a view would pin the whole piece it came from.
    this.kept = Buffer.from(this.kept.subarray(walked));
    this.next -= walked;
    this.dropped += walked;
    if (this.dropped + this.kept.length > MAX_HEADER_BYTES) throw new AnalysisError('no "SSND" chunk in the AIFF header');
    return null;
  }
}

function parseComm(chunk: Buffer, compressed: boolean): AiffFormat {
  if (chunk.length < (compressed ? 22 : 18)) throw new AnalysisError('AIFF "COMM" chunk too short');
  const channels = chunk.readInt16BE(0);
  const frames = chunk.readUInt32BE(2);
  const bitDepth = chunk.readInt16BE(6);
  const sampleRate = extendedToNumber(chunk.subarray(8, 18));
  const compression = compressed ? chunk.readUInt32BE(18) : COMPRESSION_NONE;
  if (compression !== COMPRESSION_NONE && compression !== COMPRESSION_SOWT) {
    throw new AnalysisError(`unsupported AIFF-C compression "${chunk.toString('latin1', 18, 22)}"`);
  }
  const littleEndian = compression === COMPRESSION_SOWT;
  if (bitDepth < 1 || bitDepth > 32 || (littleEndian && bitDepth % 8 !== 0)) throw new AnalysisError(`unsupported AIFF sample size ${bitDepth}`);
  if (channels < 1 || channels > 32) throw new AnalysisError(`implausible AIFF channel count ${channels}`);
  if (!Number.isInteger(sampleRate) || sampleRate < 1000 || sampleRate > 768_000) throw new AnalysisError(`implausible AIFF sample rate ${sampleRate}`);
  if (frames > MAX_DURATION_SECONDS * sampleRate) {
    throw new AnalysisError(`the AIFF announces audio longer than ${MAX_DURATION_SECONDS / 3600} hours, the longest analysed`);
  }
  return { bitDepth, channels, sampleRate, littleEndian, frames };
}

/** The 80-bit IEEE 754 extended number of COMM's sample rate: sign and 15-bit exponent, then a 64-bit mantissa with its integer bit. */
function extendedToNumber(bytes: Buffer): number {
  const exponent = bytes.readUInt16BE(0) & 0x7fff;
  const mantissa = bytes.readUInt32BE(2) * 2 ** 32 + bytes.readUInt32BE(6);
  if (exponent === 0 && mantissa === 0) return 0;
  const value = mantissa * 2 ** (exponent - 16383 - 63);
  return bytes[0]! & 0x80 ? -value : value;
}

/** Samples are stored in whole bytes, left-justified: a 20-bit sample takes 3 bytes. */
const bytesPerSample = (bitDepth: number): number => Math.ceil(bitDepth / 8);

function toFloat(bytes: Buffer, frames: number, format: AiffFormat): Float32Array[] {
  const { channels, bitDepth, littleEndian } = format;
  const width = bytesPerSample(bitDepth);
  // Left-justified: read as a signed integer of the whole width, scaled by that width's full range.
  const scale = 2 ** (width * 8 - 1);
  const read = littleEndian ? (at: number) => bytes.readIntLE(at, width) : (at: number) => bytes.readIntBE(at, width);
  const out = Array.from({ length: channels }, () => new Float32Array(frames));
  for (let channel = 0; channel < channels; channel += 1) {
    const target = out[channel]!;
    const stride = channels * width;
    for (let frame = 0, at = channel * width; frame < frames; frame += 1, at += stride) target[frame] = read(at) / scale;
  }
  return out;
}
