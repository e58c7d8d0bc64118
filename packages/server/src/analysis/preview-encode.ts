// A listening preview of one audio file (§20), in one streamed pass: the analysis' decoders
// (../analysis/decode-stream.ts) → downmix (./downmix.ts) → band-limited resampling (./resample.ts) → AAC-LC
// (FFmpeg's encoder in WASM, @mediabunny/aac-encoder) → an MP4 whose index comes first (mediabunny's
// `fastStart: 'reserve'`: the index's room is set aside at the start from the duration analysis measured, and
// filled at the end), written to a local file. Every stage keeps only a few thousand frames, so memory does not
// grow with the duration; no system binary runs.
//
// Decisions:
// - The encoder primes 1024 frames (FFmpeg's AAC `initial_padding`). The samples go in with timestamps shifted
//   back by that much, so mediabunny writes an edit list starting at media time 1024; the edit's duration (and
//   the movie's) is then set to the exact number of frames (./mp4-durations.ts), so a player starts on the
//   original's first sample and stops on its last.
// - mediabunny's own resampler is linear (it aliases from 96 kHz): it is never given a rate to convert.
import { registerAacEncoder } from '@mediabunny/aac-encoder';
import { AudioSample, AudioSampleSource, FilePathTarget, Mp4OutputFormat, Output } from 'mediabunny';
import type { Readable } from 'node:stream';
import { stat } from 'node:fs/promises';
import type { ObjectSource } from '../core/store/index.js';
import { AnalysisError, type DecodedChunk, MAX_DURATION_SECONDS } from './decoded.js';
import { decodeAudio } from './decode-stream.js';
import { downmix, previewChannels } from './downmix.js';
import { setExactDuration } from './mp4-durations.js';
import { createResampler, previewSampleRate, type Resampler } from './resample.js';

registerAacEncoder();

/** Bits per second of a preview: 256 kbps stereo, 128 kbps mono (§20). */
export const PREVIEW_BITRATE = { 1: 128_000, 2: 256_000 } as const;
/** FFmpeg's AAC encoder delays its output by one frame of 1024 samples (`initial_padding`). */
const ENCODER_PRIMING = 1024;
const AAC_FRAME = 1024;

/** What the preview is, once written. */
export interface PreviewFacts {
  durationMs: number;
  sampleRate: number;
  channels: 1 | 2;
  bitrate: number;
  bytes: number;
}

export type PreviewOutcome = { status: 'done'; preview: PreviewFacts } | { status: 'failed'; reason: string } | { status: 'unsupported' };

export interface PreviewOptions {
  /**
   * The duration analysis measured: it sizes the room set aside for the index (a file decoding to more fails).
   * Null before the analysis: the header's bound on the frames does (DecodedChunk.maxFrames), and a file whose
   * header gives none rejects with DurationUnknown.
   */
  expectedDurationMs: number | null;
  signal?: AbortSignal;
  /** Awaited after each decoded slice (the thread gives way to uploads). */
  pace?: () => Promise<void>;
}

/** A preview asked for before the analysis, of a file whose header does not bound its length: it waits for the analysis. */
export class DurationUnknown extends Error {
  constructor() {
    super('the file\'s header does not bound its duration: the preview waits for the analysis');
  }
}

/**
 * Writes the preview of `source` (of the file type `extension`) to the local file `outPath`. Never throws for bad
 * audio (`failed` with the reason); a file that cannot be read, or an output that cannot be written, rejects.
 */
export async function encodePreview(source: string | ObjectSource | Readable, extension: string, outPath: string, options: PreviewOptions): Promise<PreviewOutcome> {
  const sourceBytes = typeof source === 'object' && 'size' in source ? source.size : null;
  const encoder = new PreviewEncoder(outPath, options.expectedDurationMs, sourceBytes);
  try {
    const decoded = await decodeAudio(source, extension, (chunk) => encoder.take(chunk), options);
    if (decoded.status !== 'done') return decoded;
    if (encoder.inputFrames === 0) return { status: 'failed', reason: 'no audio could be decoded' };
    const facts = await encoder.finish();
    return { status: 'done', preview: facts };
  } catch (error) {
    if (options.signal?.aborted || error instanceof DurationUnknown) throw error;
    if (error instanceof AnalysisError) return { status: 'failed', reason: error.message };
    throw error;
  } finally {
    await encoder.close();
  }
}

/** The stages after the decoder; they start with the first chunk, which gives the format. */
class PreviewEncoder {
  inputFrames = 0;
  private format: { inputRate: number; inputChannels: number; rate: number; channels: 1 | 2 } | null = null;
  private resampler: Resampler | null = null;
  private output: Output | null = null;
  private source: AudioSampleSource | null = null;
  /** Frames handed to the encoder. */
  private written = 0;

  constructor(
    private readonly outPath: string,
    private readonly expectedDurationMs: number | null,
    /** The file's size, when known: PCM holds at most one sample a byte, so a lying header's bound is cut to it. */
    private readonly sourceBytes: number | null,
  ) {}

  async take(chunk: DecodedChunk): Promise<void> {
    const format = this.format ?? (await this.start(chunk));
    if (chunk.sampleRate !== format.inputRate || chunk.channelData.length !== format.inputChannels) {
      throw new AnalysisError('the sample rate or channel count changes within the file');
    }
    this.inputFrames += chunk.channelData[0]!.length;
    const mixed = downmix(chunk.channelData, format.channels);
    const interleaved = interleave(mixed);
    await this.add(this.resampler ? this.resampler.push(interleaved) : interleaved);
  }

  async finish(): Promise<PreviewFacts> {
    const format = this.format!;
    if (this.resampler) await this.add(this.resampler.end());
    this.source!.close();
    await this.output!.finalize();
    const frames = this.written;
    await setExactDuration(this.outPath, frames, format.rate);
    const { size } = await stat(this.outPath);
    return {
      durationMs: Math.round((frames / format.rate) * 1000),
      sampleRate: format.rate,
      channels: format.channels,
      bitrate: PREVIEW_BITRATE[format.channels],
      bytes: size,
    };
  }

  /** Lets the encoder's thread and the resampler go, finished or not. */
  async close(): Promise<void> {
    this.resampler?.destroy();
    this.resampler = null;
    const output = this.output;
    this.output = null;
    if (output && output.state !== 'finalized' && output.state !== 'canceled') await output.cancel();
  }

  private async start(chunk: DecodedChunk): Promise<NonNullable<PreviewEncoder['format']>> {
    const inputRate = chunk.sampleRate;
    const inputChannels = chunk.channelData.length;
    const rate = previewSampleRate(inputRate);
    const channels = previewChannels(inputChannels);
    // The index's room: every frame of the measured duration (or of the header's bound, at the preview's rate), the
    // priming frame, the last partial one, and a margin.
    let expectedFrames: number;
    if (this.expectedDurationMs !== null) expectedFrames = Math.ceil((this.expectedDurationMs / 1000) * rate * 1.01);
    else if (chunk.maxFrames !== undefined) {
      const bound = Math.min(chunk.maxFrames, this.sourceBytes === null ? Infinity : Math.floor(this.sourceBytes / inputChannels));
      if (bound > MAX_DURATION_SECONDS * inputRate) throw new AnalysisError(`the file announces audio longer than ${MAX_DURATION_SECONDS / 3600} hours, the longest analysed`);
      expectedFrames = Math.ceil((bound * rate) / inputRate);
    }
    else throw new DurationUnknown();
    if (rate !== inputRate) this.resampler = await createResampler(channels, inputRate, rate);
    this.output = new Output({ format: new Mp4OutputFormat({ fastStart: 'reserve' }), target: new FilePathTarget(this.outPath) });
    this.source = new AudioSampleSource({ codec: 'aac', bitrate: PREVIEW_BITRATE[channels] });
    this.output.addAudioTrack(this.source, { maximumPacketCount: Math.ceil((expectedFrames + rate) / AAC_FRAME) + 4 });
    await this.output.start();
    this.format = { inputRate, inputChannels, rate, channels };
    return this.format;
  }

  private async add(interleaved: Float32Array): Promise<void> {
    const { rate, channels } = this.format!;
    const frames = interleaved.length / channels;
    if (frames === 0) return;
    const sample = new AudioSample({ data: interleaved, format: 'f32', numberOfChannels: channels, sampleRate: rate, timestamp: (this.written - ENCODER_PRIMING) / rate });
    try {
      await this.source!.add(sample);
    } finally {
      sample.close();
    }
    this.written += frames;
  }
}

/** Planar channels as one interleaved array (what the encoder and the resampler take). */
export function interleave(channels: Float32Array[]): Float32Array {
  const count = channels.length;
  if (count === 1) return channels[0]!;
  const frames = channels[0]!.length;
  const out = new Float32Array(frames * count);
  for (let c = 0; c < count; c++) {
    const channel = channels[c]!;
    for (let i = 0, at = c; i < frames; i++, at += count) out[at] = channel[i]!;
  }
  return out;
}
