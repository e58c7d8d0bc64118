// Analysis of one audio file in a single streamed pass: the bytes go through a decoder (./decode-stream.ts) and
// every decoded chunk feeds the loudness meter and the peak reducer, then is dropped, so memory does not
// grow with the duration. Format figures come from the decoded stream and the codec's own headers; nothing
// is read twice.
import type { Readable } from 'node:stream';
import type { ObjectSource } from '../core/store/index.js';
import { AnalysisError, type Codec, type DecodedChunk, MAX_DURATION_SECONDS } from './decoded.js';
import { decodeAudio } from './decode-stream.js';
import { LoudnessMeter, type Loudness } from './loudness.js';
import { PeakReducer, type WaveformData } from './peaks.js';

/** The contract's AudioInfo without `peaksUrl`, which the HTTP layer adds. */
export interface AudioFacts {
  codec: Codec;
  durationMs: number;
  sampleRate: number;
  bitDepth: number | null;
  channels: number;
  /** Bits per second: the PCM rate for WAV, the file's average for every other codec. */
  bitrate: number;
  loudness: Loudness;
}

export type AudioAnalysis =
  | { status: 'done'; audio: AudioFacts; peaks: WaveformData }
  | { status: 'failed'; reason: string }
  | { status: 'unsupported' };

/**
 * Analyses a file (a stored object, a local file's path, or a stream) of the given extension ("wav", "flac", ...). Never throws for bad
 * audio: a file that cannot be decoded gives `failed` with the reason. `signal` stops it between two
 * chunks (it rejects with the signal's reason); `pace` is awaited after each decoded slice, so a caller can
 * make room for other work on the thread.
 */
export async function analyzeAudio(
  source: string | ObjectSource | Readable,
  extension: string,
  { signal, pace }: { signal?: AbortSignal; pace?: () => Promise<void> } = {},
): Promise<AudioAnalysis> {
  const measurement = new Measurement();
  const decoded = await decodeAudio(source, extension, (chunk) => measurement.take(chunk), { signal, pace });
  if (decoded.status !== 'done') return decoded;
  const { meter, reducer, frames } = measurement;
  if (!meter || !reducer || frames === 0) return { status: 'failed', reason: 'no audio could be decoded' };
  const { sampleRate, channels } = meter;
  const { codec, bitDepth, bytes } = decoded;
  const seconds = frames / sampleRate;
  const pcm = codec === 'pcm' || codec === 'pcm-float';
  return {
    status: 'done',
    audio: {
      codec,
      durationMs: Math.round(seconds * 1000),
      sampleRate,
      bitDepth,
      channels,
      bitrate: pcm && bitDepth ? sampleRate * bitDepth * channels : Math.round((bytes * 8) / seconds),
      loudness: meter.result(),
    },
    peaks: reducer.result(),
  };
}

/** Where decoded chunks go: the meter and the reducer start with the first chunk, which gives the format. */
class Measurement {
  meter: LoudnessMeter | null = null;
  reducer: PeakReducer | null = null;
  frames = 0;

  take(chunk: DecodedChunk): void {
    if (!this.meter || !this.reducer) {
      this.meter = new LoudnessMeter(chunk.sampleRate, chunk.channelData.length);
      this.reducer = new PeakReducer(chunk.sampleRate);
    } else if (chunk.sampleRate !== this.meter.sampleRate || chunk.channelData.length !== this.meter.channels) {
      throw new AnalysisError('the sample rate or channel count changes within the file');
    }
    this.frames += chunk.channelData[0]!.length;
    if (this.frames > MAX_DURATION_SECONDS * chunk.sampleRate) {
      throw new AnalysisError(`the audio is longer than ${MAX_DURATION_SECONDS / 3600} hours, the longest analysed`);
    }
    this.meter.add(chunk.channelData);
    this.reducer.add(chunk.channelData);
  }
}
