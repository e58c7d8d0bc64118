// One streamed decode of an audio file, shared by the analysis (./analyze.ts) and the listening previews
// (./preview-encode.ts): the bytes go through a decoder (./decoders.ts) slice by slice and each decoded chunk
// is handed on, then dropped, so memory does not grow with the duration.
import type { Readable } from 'node:stream';
import { localFileSource } from '../core/store/fs-store.js';
import type { ObjectSource } from '../core/store/index.js';
import { AnalysisError, type Codec, type DecodedChunk } from './decoded.js';
import { createDecoder, isAudioExtension } from './decoders.js';
import { m4aInStreamingOrder } from './m4a.js';

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

export type DecodeOutcome =
  | { status: 'done'; codec: Codec; bitDepth: number | null; bytes: number }
  | { status: 'failed'; reason: string }
  | { status: 'unsupported' };

/**
 * Decodes a file (a stored object, a local file's path, or a stream) of the given extension ("wav", "flac", ...),
 * handing each decoded chunk to `take` (awaited). Never throws for bad audio: a file that cannot be decoded, or
 * that `take` refuses with an AnalysisError, gives `failed` with the reason. `signal` stops it between two chunks
 * (it rejects with the signal's reason); `pace` is awaited after each decoded slice, so a caller can make room
 * for other work on the thread. A file that cannot be read (ENOENT, EIO) rejects: the server's trouble.
 */
export async function decodeAudio(
  source: string | ObjectSource | Readable,
  extension: string,
  take: (chunk: DecodedChunk) => void | Promise<void>,
  { signal, pace }: { signal?: AbortSignal; pace?: () => Promise<void> } = {},
): Promise<DecodeOutcome> {
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
  let bytes = 0;
  let samples = 0;
  const hand = async (chunk: DecodedChunk | null): Promise<void> => {
    if (!chunk || chunk.channelData.length === 0) return;
    samples += chunk.channelData[0]!.length * chunk.channelData.length;
    await take(chunk);
  };
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      signal?.throwIfAborted();
      for (let at = 0; at < chunk.length; at += sliceBytes) {
        const slice = chunk.subarray(at, at + sliceBytes);
        bytes += slice.length;
        await hand(await decoder.decode(slice));
        if (samples > MAX_SAMPLES_PER_BYTE * Math.max(bytes, RATIO_GRACE_BYTES)) {
          throw new AnalysisError(`it decodes to more than ${MAX_SAMPLES_PER_BYTE} samples per byte, more than any real codec produces`);
        }
        await pace?.();
      }
    }
    await hand(await decoder.finish());
    return { status: 'done', codec: decoder.codec(), bitDepth: decoder.bitDepth(), bytes };
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
