/** One decoded chunk: one Float32Array per channel, samples in [-1, 1]. */
export interface DecodedChunk {
  channelData: Float32Array[];
  sampleRate: number;
  /**
   * The most frames the whole file can decode to, where its header bounds them soundly before any is decoded
   * (PCM: the sample data's announced bytes over a frame's; the decoder stops there). A preview started before
   * the analysis sizes its index from it.
   */
  maxFrames?: number;
}

/** A decoder fed the file's bytes in order, chunk by chunk; it keeps only what one frame needs. */
export interface StreamDecoder {
  decode(chunk: Uint8Array): DecodedChunk | null | Promise<DecodedChunk | null>;
  /** The end of the file: returns what is still buffered, or throws when the file ended too early. */
  finish(): DecodedChunk | null | Promise<DecodedChunk | null>;
  free?(): void;
}

/**
 * The longest audio analysed: a file announcing more, or decoding to more, is `failed`. A whole day's
 * rehearsal fits; what a few KiB of FLAC can claim to hold (days of samples) does not.
 */
export const MAX_DURATION_SECONDS = 10 * 3600;

/** The file is not decodable audio (truncated, lying header, wrong codec): the analysis fails, the file stays. */
export class AnalysisError extends Error {
  override readonly name = 'AnalysisError';
}

export type Codec = 'pcm' | 'pcm-float' | 'flac' | 'mp3' | 'vorbis' | 'opus' | 'aac' | 'alac';

/** A decoder plus what it learns from the stream's own headers. */
export interface FileDecoder extends StreamDecoder {
  codec(): Codec;
  /** Bits per sample of a lossless codec, null for lossy ones. */
  bitDepth(): number | null;
}
