// A streaming AIFF / AIFF-C decoder, written here as wav.ts is: music-metadata reads AIFF headers but not the
// samples, and the npm AIFF decoders want the whole file in memory. Integer PCM of 1 to 32 bits: big-endian
// (AIFF, and AIFF-C `NONE`) or little-endian (AIFF-C `sowt`, what Logic and ffmpeg write for 16-bit).
import { AnalysisError, type Codec, type FileDecoder, MAX_DURATION_SECONDS } from './decoded.js';
import { bytesPerSample, ChunkedHeaderReader, type PcmContainer, PcmDecoder } from './pcm.js';

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

/** The AIFF / AIFF-C container: an "SSND" chunk of exactly the frames COMM announces. */
const AIFF_CONTAINER: PcmContainer<AiffFormat> = {
  name: 'AIFF',
  header: () => new AiffHeaderReader(),
  dataBytes: (format) => format.frames * bytesPerSample(format.bitDepth) * format.channels,
  toFloat,
};

export class AiffDecoder extends PcmDecoder<AiffFormat> implements FileDecoder {
  constructor() {
    super(AIFF_CONTAINER);
  }

  codec(): Codec {
    return 'pcm';
  }

  bitDepth(): number | null {
    return this.format?.bitDepth ?? null;
  }
}

/** An AIFF header: the COMM chunk gives the format, the SSND chunk's start the first sample. */
export class AiffHeaderReader extends ChunkedHeaderReader<AiffFormat> {
  private compressed = false;
  private comm: AiffFormat | null = null;

  constructor() {
    super('no "SSND" chunk in the AIFF header');
  }

  protected checkFileHeader(start: Buffer): void {
    const form = start.readUInt32BE(8);
    if (start.readUInt32BE(0) !== FORM || (form !== AIFF && form !== AIFC)) throw new AnalysisError('not an AIFF or AIFF-C file');
    this.compressed = form === AIFC;
  }

  protected walk(): { format: AiffFormat; samples: Buffer } | null {
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
