// What the WAV and AIFF decoders share: both containers are a chunked header, then interleaved integer or
// float PCM frames. Each container says how to read its header and convert its samples; the streaming is here.
import { AnalysisError, type DecodedChunk, type StreamDecoder } from './decoded.js';

/** Headers longer than this are not a WAV or AIFF file (ffmpeg's are < 100 bytes; a DAW's LIST, markers, comments and ID3 chunk stay far below). */
const MAX_HEADER_BYTES = 1 << 20;

/**
 * A chunked header (RIFF, IFF) read as it arrives, in pieces of any size. It keeps only the bytes it has not
 * walked past (a chunk it skips is not kept), so each byte is looked at once: a hostile file of a million empty
 * chunks, or a header grown piece by piece, would otherwise cost seconds of CPU in copies and walks from its start.
 */
export abstract class ChunkedHeaderReader<Format> {
  /** Bytes from `dropped` on: the chunk header or the format chunk being read. */
  protected kept: Buffer = Buffer.alloc(0);
  private dropped = 0;
  /** Where the next chunk starts, counted from the first kept byte; past the kept bytes while a chunk is skipped. */
  protected next = 12;

  /** `noSampleData`: the error's text when the header never reaches the samples. */
  constructor(private readonly noSampleData: string) {}

  /** The file's first 12 bytes (its container and form type): throws when they are not this container's. */
  protected abstract checkFileHeader(start: Buffer): void;

  /**
   * Walks the chunks in `kept` from `next` on, moving `next` past each: the format and the first sample bytes
   * once the samples begin, null when the kept bytes end first.
   */
  protected abstract walk(): { format: Format; samples: Buffer } | null;

  /** The format and the first sample bytes once the sample data begins; null while the header goes on. */
  push(piece: Uint8Array): { format: Format; samples: Buffer } | null {
    const bytes = Buffer.from(piece.buffer, piece.byteOffset, piece.length);
    const isFirst = this.dropped === 0 && this.kept.length < 12;
    this.kept = this.kept.length === 0 ? bytes : Buffer.concat([this.kept, bytes]);
    if (isFirst) {
      if (this.kept.length < 12) return null;
      this.checkFileHeader(this.kept);
    }
    const parsed = this.walk();
    if (parsed) return parsed;
    const walked = Math.min(this.next, this.kept.length);
    // A copy: a view would pin the whole piece it came from.
    this.kept = Buffer.from(this.kept.subarray(walked));
    this.next -= walked;
    this.dropped += walked;
    if (this.dropped + this.kept.length > MAX_HEADER_BYTES) throw this.missingSampleData();
    return null;
  }

  /** The error for a file whose header ends, or goes on too long, before the samples. */
  missingSampleData(): AnalysisError {
    return new AnalysisError(this.noSampleData);
  }
}

/** What every PCM header gives: interleaved frames of `channels` samples, each in whole bytes. */
export interface PcmFormat {
  bitDepth: number;
  channels: number;
  sampleRate: number;
}

/** Samples are stored in whole bytes (left-justified in AIFF: a 20-bit sample takes 3 bytes). */
export const bytesPerSample = (bitDepth: number): number => Math.ceil(bitDepth / 8);

/** What a PCM container tells the stream about itself. */
export interface PcmContainer<Format extends PcmFormat> {
  /** "WAV", "AIFF": names the file in errors. */
  name: string;
  header(): ChunkedHeaderReader<Format>;
  /** Bytes of sample data the header announces, or null when it does not know. */
  dataBytes(format: Format): number | null;
  toFloat(bytes: Buffer, frames: number, format: Format): Float32Array[];
}

export class PcmDecoder<Format extends PcmFormat> implements StreamDecoder {
  private header: ChunkedHeaderReader<Format> | null;
  private pending = Buffer.alloc(0);
  format: Format | null = null;
  private dataSeen = 0;

  constructor(private readonly container: PcmContainer<Format>) {
    this.header = container.header();
  }

  decode(chunk: Uint8Array): DecodedChunk | null {
    if (this.header) {
      const parsed = this.header.push(chunk);
      if (!parsed) return null;
      this.format = parsed.format;
      chunk = parsed.samples;
      this.header = null;
    }
    const format = this.format!;
    const dataBytes = this.container.dataBytes(format);
    if (dataBytes !== null) {
      // Chunks after the sample data (LIST, ID3, markers written last) are not audio.
      const left = dataBytes - this.dataSeen;
      if (chunk.length > left) chunk = chunk.subarray(0, Math.max(0, left));
    }
    this.dataSeen += chunk.length;
    const bytes = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    const frameBytes = bytesPerSample(format.bitDepth) * format.channels;
    const frames = Math.floor(bytes.length / frameBytes);
    this.pending = Buffer.from(bytes.subarray(frames * frameBytes));
    return {
      channelData: this.container.toFloat(bytes, frames, format),
      sampleRate: format.sampleRate,
      ...(dataBytes !== null ? { maxFrames: Math.floor(dataBytes / frameBytes) } : {}),
    };
  }

  finish(): DecodedChunk | null {
    if (this.header) throw this.header.missingSampleData();
    const dataBytes = this.container.dataBytes(this.format!);
    if (dataBytes !== null && this.dataSeen < dataBytes) {
      throw new AnalysisError(`truncated ${this.container.name}: the header announces ${dataBytes} bytes of audio, the file holds ${this.dataSeen}`);
    }
    return null;
  }
}
