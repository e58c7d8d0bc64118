// A STEM ZIP: every entry with its size; audio entries with their format read from their headers only
// (entries are streamed and the stream dropped once the header is read: nothing is decoded). WAV and AIFF
// headers are read by ./wav.ts and ./aiff.ts, like a decoded cut's; every other codec by music-metadata. The ZIP is read by
// yauzl, which reads the central directory and streams entries, as ranges of the stored object.
import { PassThrough, pipeline, type Readable, Transform } from 'node:stream';
import { parseStream } from 'music-metadata';
import yauzl from 'yauzl';
import { localFileSource } from '../core/store/fs-store.js';
import type { ObjectSource } from '../core/store/index.js';
import { AiffHeaderReader } from './aiff.js';
import { AnalysisError, type Codec } from './decoded.js';
import { isAudioExtension } from './decoders.js';
import { WavHeaderReader } from './wav.js';

export interface StemAudio {
  codec: Codec;
  durationMs: number;
  sampleRate: number;
  bitDepth: number | null;
  channels: number;
}

export interface StemEntry {
  path: string;
  size: number;
  audio: StemAudio | null;
}

export interface StemsSummary {
  entryCount: number;
  audioCount: number;
  sampleRates: number[];
  /** Distinct bit depths of the audio entries; null stands for the lossy ones. */
  bitDepths: (number | null)[];
  longestMs: number | null;
  shortestMs: number | null;
  /** One sample rate, one bit depth, lengths within 10 ms, and every audio entry readable. */
  consistent: boolean;
}

export type StemsAnalysis = { status: 'done'; stems: { entries: StemEntry[]; summary: StemsSummary } } | { status: 'failed'; reason: string };

const LENGTH_TOLERANCE_MS = 10;
/**
 * How much of an audio entry is inflated to read its header. An entry of deflated zeros costs seconds of CPU
 * per GiB, and music-metadata scans an MP3 to its end for a frame. Headers sit in the first few KiB (a WAV's
 * within 1 MiB, ./wav.ts); only an Ogg stem's length needs its last page, so one above 32 MiB (about half an
 * hour of Vorbis) is listed without audio.
 */
const MAX_HEADER_READ_BYTES = 32 * 1024 * 1024;

/**
 * The entries a STEM ZIP lists (and stores, a row each): a real session holds hundreds; a crafted ZIP of a
 * million empty entries would cost a million rows. Entries past these are counted in the summary, neither read
 * nor listed, and the summary is then not `consistent` (what was not read cannot be vouched for).
 */
export const MAX_LISTED_STEM_ENTRIES = 10_000;

/** `signal` stops it between two entries (it rejects with the signal's reason). */
export async function analyzeStems(source: string | ObjectSource, signal?: AbortSignal): Promise<StemsAnalysis> {
  const stored = typeof source === 'string' ? await localFileSource(source) : source;
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise((resolve, reject) =>
      yauzl.fromRandomAccessReader(new StoredReader(stored), stored.size, { lazyEntries: true, autoClose: false }, (error, opened) =>
        error ? reject(error) : resolve(opened),
      ),
    );
  } catch (error) {
    return { status: 'failed', reason: `not a readable ZIP: ${(error as Error).message}` };
  }
  try {
    const entries: StemEntry[] = [];
    let unreadable = 0;
    let unlisted = 0;
    for await (const entry of zipEntries(zip)) {
      signal?.throwIfAborted();
      if (entry.fileName.endsWith('/')) continue;
      if (entries.length >= MAX_LISTED_STEM_ENTRIES) {
        unlisted += 1;
        continue;
      }
      const extension = entry.fileName.split('.').pop()!.toLowerCase();
      let audio: StemAudio | null = null;
      if (entry.fileName.includes('.') && isAudioExtension(extension)) {
        let stream: Readable | null = null;
        try {
          stream = boundedTo(await openEntry(zip, entry), MAX_HEADER_READ_BYTES);
          audio =
            extension === 'wav' ? await readWavStem(stream) : extension === 'aif' || extension === 'aiff' ? await readAiffStem(stream) : await readTaggedStem(stream, entry);
        } catch {
          // An encrypted entry, an unknown compression method or a broken header: listed, without audio.
          unreadable += 1;
        } finally {
          stream?.destroy();
        }
      }
      entries.push({ path: entry.fileName, size: entry.uncompressedSize, audio });
    }
    return { status: 'done', stems: { entries, summary: summarize(entries, unreadable, unlisted) } };
  } catch (error) {
    if (signal?.aborted) throw error;
    return { status: 'failed', reason: `the ZIP could not be read: ${(error as Error).message}` };
  } finally {
    zip.close();
  }
}

/**
 * The entry at `position` in the list analyzeStems makes (directories skipped), open for reading as it is
 * inflated, for its listening preview (§20, PREVIEW_STEMS): its path and its bytes, the ZIP closed with the stream.
 * Null when the ZIP has no such entry. Rejects when the ZIP or the entry cannot be read.
 */
export async function openStemEntry(source: ObjectSource, position: number): Promise<{ path: string; stream: Readable } | null> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromRandomAccessReader(new StoredReader(source), source.size, { lazyEntries: true, autoClose: false }, (error, opened) =>
      error ? reject(error) : resolve(opened),
    ),
  );
  try {
    let at = 0;
    for await (const entry of zipEntries(zip)) {
      if (entry.fileName.endsWith('/')) continue;
      if (at++ < position) continue;
      const stream = await openEntry(zip, entry);
      stream.once('close', () => zip.close());
      return { path: entry.fileName, stream };
    }
  } catch (error) {
    zip.close();
    throw error;
  }
  zip.close();
  return null;
}

async function* zipEntries(zip: yauzl.ZipFile): AsyncGenerator<yauzl.Entry> {
  for (;;) {
    const entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
      const cleanup = (): void => {
        zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
      };
      const onEntry = (found: yauzl.Entry): void => (cleanup(), resolve(found));
      const onEnd = (): void => (cleanup(), resolve(null));
      const onError = (error: Error): void => (cleanup(), reject(error));
      zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
      zip.readEntry();
    });
    if (!entry) return;
    yield entry;
  }
}

/** yauzl reads the ZIP (its central directory, then each entry) as ranges of the stored object. */
class StoredReader extends yauzl.RandomAccessReader {
  constructor(private readonly source: ObjectSource) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    // yauzl's end is exclusive and its stream is wanted at once: the ranged read is opened behind it.
    const through = new PassThrough();
    if (end <= start) return through.end();
    this.source.read({ start, end: end - 1 }).then(
      (stream) => pipeline(stream, through, () => undefined),
      (error: Error) => through.destroy(error),
    );
    return through;
  }
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream))));
}

/** The entry's first `limit` bytes; a read past them fails (so a parser never takes a prefix for the whole). */
function boundedTo(entry: Readable, limit: number): Readable {
  let read = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      read += chunk.length;
      callback(read > limit ? new AnalysisError(`audio header not found in the entry's first ${limit} bytes`) : null, chunk);
    },
  });
  // Errors travel both ways, and ending either end ends the other (the reader drops the stream once it has the header).
  return pipeline(entry, bounded, () => undefined);
}

async function readWavStem(stream: Readable): Promise<StemAudio> {
  const header = new WavHeaderReader();
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const parsed = header.push(chunk);
    if (parsed) {
      const { float, bitDepth, channels, sampleRate, dataBytes } = parsed.format;
      if (dataBytes === null) throw new AnalysisError('WAV without a data size');
      const frames = dataBytes / ((bitDepth / 8) * channels);
      return { codec: float ? 'pcm-float' : 'pcm', durationMs: Math.round((frames * 1000) / sampleRate), sampleRate, bitDepth, channels };
    }
  }
  throw new AnalysisError('no WAV header');
}

async function readAiffStem(stream: Readable): Promise<StemAudio> {
  const header = new AiffHeaderReader();
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const parsed = header.push(chunk);
    if (parsed) {
      const { bitDepth, channels, sampleRate, frames } = parsed.format;
      return { codec: 'pcm', durationMs: Math.round((frames * 1000) / sampleRate), sampleRate, bitDepth, channels };
    }
  }
  throw new AnalysisError('no AIFF header');
}

async function readTaggedStem(stream: Readable, entry: yauzl.Entry): Promise<StemAudio> {
  const { format } = await parseStream(stream, { path: entry.fileName, size: entry.uncompressedSize }, { skipCovers: true });
  const codec = codecOf(format.codec ?? '');
  if (!codec || !format.sampleRate || !format.numberOfChannels || format.duration === undefined) {
    throw new AnalysisError(`unreadable audio header (${format.codec ?? 'no codec'})`);
  }
  const lossless = codec === 'flac' || codec === 'alac';
  return {
    codec,
    durationMs: Math.round(format.duration * 1000),
    sampleRate: format.sampleRate,
    bitDepth: lossless ? (format.bitsPerSample ?? null) : null,
    channels: format.numberOfChannels,
  };
}

/** music-metadata's codec names onto ours. */
function codecOf(name: string): Codec | null {
  const lower = name.toLowerCase();
  if (lower === 'flac') return 'flac';
  if (lower.includes('layer 3')) return 'mp3';
  if (lower.startsWith('vorbis')) return 'vorbis';
  if (lower === 'opus') return 'opus';
  if (lower.includes('alac')) return 'alac';
  if (lower.includes('aac')) return 'aac';
  return null;
}

function summarize(entries: StemEntry[], unreadable: number, unlisted: number): StemsSummary {
  const audio = entries.flatMap((entry) => (entry.audio ? [entry.audio] : []));
  const sampleRates = [...new Set(audio.map((stem) => stem.sampleRate))].sort((a, b) => a - b);
  const bitDepths = [...new Set(audio.map((stem) => stem.bitDepth))].sort((a, b) => (a ?? 0) - (b ?? 0));
  const lengths = audio.map((stem) => stem.durationMs);
  const longestMs = lengths.length > 0 ? Math.max(...lengths) : null;
  const shortestMs = lengths.length > 0 ? Math.min(...lengths) : null;
  return {
    entryCount: entries.length + unlisted,
    audioCount: audio.length,
    sampleRates,
    bitDepths,
    longestMs,
    shortestMs,
    consistent:
      audio.length > 0 &&
      unreadable === 0 &&
      unlisted === 0 &&
      sampleRates.length === 1 &&
      bitDepths.length === 1 &&
      longestMs! - shortestMs! <= LENGTH_TOLERANCE_MS,
  };
}
