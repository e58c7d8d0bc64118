// Analysis of one audio file in a single streamed pass: the bytes go through a decoder (./decoders.ts) and
// every decoded chunk feeds the loudness meter and the peak reducer, then is dropped, so memory does not
// grow with the duration. Format figures come from the decoded stream and the codec's own headers; nothing
// is read twice.
import type { Readable } from 'node:stream';
import { localFileSource } from '../core/store/fs-store.js';
import type { ObjectSource } from '../core/store/index.js';
import { AnalysisError, type Codec, type DecodedChunk, MAX_DURATION_SECONDS } from './decoded.js';
import { createDecoder, isAudioExtension } from './decoders.js';
import { LoudnessMeter, type Loudness } from './loudness.js';
import { m4aInStreamingOrder } from './m4a.js';
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
 * The most bytes handed to a decoder at once, which bounds what one call decodes: the samples of all the
 * frames in a slice arrive together. WAV and AIFF hold at most one sample per byte. A compressed frame may hold far
 * more: 35 bytes of FLAC constant frames are 2 MiB of float samples, so 16 KiB of them would be 1 GB at once;
 * 2 KiB bounds that to about 120 MB, for the same CPU time on real files.
 */
const PCM_SLICE_BYTES = 16 * 1024;
/** The files of uncompressed PCM, at most one sample per byte. */
const PCM_EXTENSIONS = new Set(['wav', 'aif', 'aiff']);
const COMPRESSED_SLICE_BYTES = 2 * 1024;

/**
 * The most decoded samples (over all channels) per byte of input any real file holds: PCM holds at most one,
 * MP3 at 8 kbit/s about 45, Opus at 6 kbit/s about 130 and Opus's silent frames (DTX) under 1,000, a FLAC of
 * digital silence about 400. 35 bytes of FLAC constant frames hold 524,280 (15,000 a byte): a file over this
 * is a decompression bomb, failed at once instead of decoded to its time budget. Reckoned from the file's
 * first RATIO_GRACE_BYTES on, so one early frame of silence is not judged alone.
 */
export const MAX_SAMPLES_PER_BYTE = 4096;
const RATIO_GRACE_BYTES = 4096;

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
  const normalized = extension.toLowerCase().replace(/^\./, '');
  if (!isAudioExtension(normalized)) return { status: 'unsupported' };
  let input: Readable;
  try {
    const stored = typeof source === 'string' ? await localFileSource(source) : source;
    input = !('size' in stored) ? stored : normalized === 'm4a' ? await m4aInStreamingOrder(stored) : await stored.read();
  } catch (error) {
    if (error instanceof AnalysisError) return { status: 'failed', reason: error.message };
    throw error;
  }
  const decoder = await createDecoder(normalized);
  const sliceBytes = PCM_EXTENSIONS.has(normalized) ? PCM_SLICE_BYTES : COMPRESSED_SLICE_BYTES;
  const measurement = new Measurement();
  let bytes = 0;
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      signal?.throwIfAborted();
      for (let at = 0; at < chunk.length; at += sliceBytes) {
        const slice = chunk.subarray(at, at + sliceBytes);
        bytes += slice.length;
        measurement.take(await decoder.decode(slice));
        if (measurement.samples > MAX_SAMPLES_PER_BYTE * Math.max(bytes, RATIO_GRACE_BYTES)) {
          throw new AnalysisError(`it decodes to more than ${MAX_SAMPLES_PER_BYTE} samples per byte, more than any real codec produces`);
        }
        await pace?.();
      }
    }
    measurement.take(await decoder.finish());
    const { meter, reducer, frames } = measurement;
    if (!meter || !reducer || frames === 0) return { status: 'failed', reason: 'no audio could be decoded' };
    const { sampleRate, channels } = meter;
    const bitDepth = decoder.bitDepth();
    const seconds = frames / sampleRate;
    const codec = decoder.codec();
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
  } catch (error) {
    if (signal?.aborted) throw error;
    if (error instanceof AnalysisError) return { status: 'failed', reason: error.message };
    // A file that cannot be read (ENOENT, EIO) is the server's trouble, for the caller to retry or report.
    if (typeof (error as NodeJS.ErrnoException).code === 'string') throw error;
    // The decoders' own failures (wasm aborts, malformed frames) are bad input too, not a server fault.
    return { status: 'failed', reason: `the ${normalized} decoder failed: ${(error as Error).message}` };
  } finally {
    decoder.free?.();
    input.destroy();
  }
}

/** Where decoded chunks go: the meter and the reducer start with the first chunk, which gives the format. */
class Measurement {
  meter: LoudnessMeter | null = null;
  reducer: PeakReducer | null = null;
  frames = 0;
  /** Samples over all channels. */
  samples = 0;

  take(chunk: DecodedChunk | null): void {
    if (!chunk || chunk.channelData.length === 0) return;
    if (!this.meter || !this.reducer) {
      this.meter = new LoudnessMeter(chunk.sampleRate, chunk.channelData.length);
      this.reducer = new PeakReducer(chunk.sampleRate);
    } else if (chunk.sampleRate !== this.meter.sampleRate || chunk.channelData.length !== this.meter.channels) {
      throw new AnalysisError('the sample rate or channel count changes within the file');
    }
    this.frames += chunk.channelData[0]!.length;
    this.samples += chunk.channelData[0]!.length * chunk.channelData.length;
    if (this.frames > MAX_DURATION_SECONDS * chunk.sampleRate) {
      throw new AnalysisError(`the audio is longer than ${MAX_DURATION_SECONDS / 3600} hours, the longest analysed`);
    }
    this.meter.add(chunk.channelData);
    this.reducer.add(chunk.channelData);
  }
}
