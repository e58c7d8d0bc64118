// Decoders per extension. The wasm-audio-decoders family (FLAC, MPEG via mpg123, Ogg Vorbis, Ogg Opus)
// and @audio/decode-aac (FAAD2 for AAC, a JS port of Apple's decoder for ALAC) are maintained, ship as
// wasm/JS on npm (no system binaries) and take the file chunk by chunk. WAV is decoded in ./wav.ts, AIFF in ./aiff.ts.
import { decoder as aacDecoder } from '@audio/decode-aac';
import { FLACDecoder } from '@wasm-audio-decoders/flac';
import { OggVorbisDecoder } from '@wasm-audio-decoders/ogg-vorbis';
import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { AnalysisError, type Codec, type DecodedChunk, type FileDecoder, MAX_DURATION_SECONDS } from './decoded.js';
import { AiffDecoder } from './aiff.js';
import { WavDecoder } from './wav.js';

/** Codec names, the same for a decoded cut (here) and a stem read from its headers (./stems.ts). */
export const AUDIO_EXTENSIONS = ['wav', 'aif', 'aiff', 'flac', 'mp3', 'ogg', 'opus', 'aac', 'm4a'] as const;
export type AudioExtension = (typeof AUDIO_EXTENSIONS)[number];

export function isAudioExtension(extension: string): extension is AudioExtension {
  return (AUDIO_EXTENSIONS as readonly string[]).includes(extension);
}

interface WasmResult {
  channelData: Float32Array[];
  samplesDecoded: number;
  sampleRate: number;
  errors: unknown[];
}

function fromWasm(result: WasmResult): DecodedChunk | null {
  return result.samplesDecoded > 0 ? { channelData: result.channelData, sampleRate: result.sampleRate } : null;
}

class WavFileDecoder extends WavDecoder implements FileDecoder {
  codec(): Codec {
    return this.format?.float ? 'pcm-float' : 'pcm';
  }
  bitDepth(): number | null {
    return this.format?.bitDepth ?? null;
  }
}

/**
 * FLAC, with the STREAMINFO block read here for the bit depth and the total length: the decoded samples are
 * held to it both ways (truncation; a few bytes of constant frames that decode to far more, a bomb).
 */
class FlacFileDecoder implements FileDecoder {
  private head = Buffer.alloc(0);
  private streamInfo: StreamInfo | null = null;
  private decoded = 0;

  constructor(private readonly wasm: FLACDecoder) {}

  async decode(chunk: Uint8Array): Promise<DecodedChunk | null> {
    if (!this.streamInfo) {
      this.head = Buffer.concat([this.head, chunk]);
      if (this.head.length >= 42) this.streamInfo = readStreamInfo(this.head);
    }
    return this.count(await this.wasm.decode(chunk));
  }

  async finish(): Promise<DecodedChunk | null> {
    const rest = this.count(await this.wasm.flush());
    const expected = this.streamInfo?.totalSamples ?? 0;
    // STREAMINFO's total is 0 when the encoder did not know it; then there is nothing to hold the file to.
    if (expected > 0 && this.decoded < expected) {
      throw new AnalysisError(`truncated FLAC: STREAMINFO announces ${expected} samples, ${this.decoded} decoded`);
    }
    return rest;
  }

  private count(result: WasmResult): DecodedChunk | null {
    this.decoded += result.samplesDecoded;
    const expected = this.streamInfo?.totalSamples ?? 0;
    if (expected > 0 && this.decoded > expected) {
      throw new AnalysisError(`the FLAC decodes to more than the ${expected} samples STREAMINFO announces`);
    }
    return fromWasm(result);
  }

  free(): void {
    this.wasm.free();
  }
  codec(): Codec {
    return 'flac';
  }
  bitDepth(): number | null {
    return this.streamInfo?.bitDepth ?? null;
  }
}

interface StreamInfo {
  bitDepth: number;
  /** Per channel; 0 when the encoder did not know it. */
  totalSamples: number;
}

function readStreamInfo(head: Buffer): StreamInfo {
  if (head.toString('latin1', 0, 4) !== 'fLaC' || (head[4]! & 0x7f) !== 0) throw new AnalysisError('not a FLAC file');
  // STREAMINFO body from byte 8: sample rate (20 bits), channels - 1 (3), bits per sample - 1 (5), total samples (36).
  const sampleRate = (head.readUInt16BE(18) << 4) | (head[20]! >> 4);
  const bitDepth = (((head[20]! & 0x01) << 4) | (head[21]! >> 4)) + 1;
  const totalSamples = (head[21]! & 0x0f) * 2 ** 32 + head.readUInt32BE(22);
  if (sampleRate > 0 && totalSamples > MAX_DURATION_SECONDS * sampleRate) {
    throw new AnalysisError(`the FLAC announces audio longer than ${MAX_DURATION_SECONDS / 3600} hours, the longest analysed`);
  }
  return { bitDepth, totalSamples };
}

/** A decoder from the wasm family whose output needs no bookkeeping. */
class WasmFileDecoder implements FileDecoder {
  constructor(
    private readonly wasm: {
      decode(chunk: Uint8Array): WasmResult | Promise<WasmResult>;
      flush?(): Promise<WasmResult>;
      free(): void;
    },
    private readonly name: Codec,
  ) {}

  async decode(chunk: Uint8Array): Promise<DecodedChunk | null> {
    return fromWasm(await this.wasm.decode(chunk));
  }
  async finish(): Promise<DecodedChunk | null> {
    return this.wasm.flush ? fromWasm(await this.wasm.flush()) : null;
  }
  free(): void {
    this.wasm.free();
  }
  codec(): Codec {
    return this.name;
  }
  bitDepth(): number | null {
    return null;
  }
}

/**
 * The thread's mpg123 instance, lent to one file at a time. Each instance holds 16 MiB of wasm memory that
 * only a full garbage collection frees, so an instance per file made a backlog of small MP3s collect dozens
 * of times a second; between two files only the decoder handle inside the instance is made anew.
 */
let idleMpegDecoder: ReusableMpegDecoder | null = null;

async function lendMpegDecoder(): Promise<ReusableMpegDecoder> {
  const idle = idleMpegDecoder;
  idleMpegDecoder = null;
  if (idle) {
    idle.reopen();
    return idle;
  }
  const wasm = new MPEGDecoder({ enableGapless: true });
  await wasm.ready;
  return new ReusableMpegDecoder(wasm);
}

/**
 * The parts of mpg123-decoder 1.0.3 that a new handle touches: its own reset() instantiates a whole new wasm
 * module, which is what lending avoids. The unit test of the decoders pins this against the package.
 */
interface MpegDecoderInternals {
  _common: {
    wasm: {
      mpeg_frame_decoder_create(handleAt: number, gapless: number): number;
      mpeg_frame_decoder_destroy(handle: number): void;
      free(at: number): void;
    };
    allocateTypedArray(length: number, type: Uint32ArrayConstructor): { ptr: number; buf: Uint32Array };
  };
  _decoder: number;
  _inputBytes: number;
  _outputSamples: number;
  _frameNumber: number;
}

class ReusableMpegDecoder {
  private readonly internals: MpegDecoderInternals;
  private readonly handleAt: { ptr: number; buf: Uint32Array };
  /** A decode that threw may have left the instance itself broken (a wasm trap): it is not lent again. */
  private broken = false;

  constructor(private readonly wasm: MPEGDecoder) {
    this.internals = wasm as unknown as MpegDecoderInternals;
    this.handleAt = this.internals._common.allocateTypedArray(1, Uint32Array);
  }

  decode(chunk: Uint8Array): WasmResult {
    try {
      return this.wasm.decode(chunk);
    } catch (error) {
      this.broken = true;
      throw error;
    }
  }

  /** A fresh mpg123 handle in the same instance: nothing of the previous file is left in it. */
  reopen(): void {
    const { _common: common } = this.internals;
    common.wasm.mpeg_frame_decoder_destroy(this.internals._decoder);
    common.wasm.free(this.internals._decoder);
    const error = common.wasm.mpeg_frame_decoder_create(this.handleAt.ptr, 1);
    if (error) throw new Error(`mpg123 could not make a decoder handle (${error})`);
    Object.assign(this.internals, { _decoder: this.handleAt.buf[0]!, _inputBytes: 0, _outputSamples: 0, _frameNumber: 0 });
  }

  /** Gives the instance back for the next file (or frees it, when a decode threw). */
  free(): void {
    if (this.broken || idleMpegDecoder) this.wasm.free();
    else idleMpegDecoder = this;
  }
}

/** AAC (ADTS or M4A) and ALAC (M4A); the M4A sample entry says which, and ALAC's bit depth. */
class Mp4FileDecoder implements FileDecoder {
  private tail = Buffer.alloc(0);
  private entry: { codec: Codec; bitDepth: number | null } | null = null;

  constructor(private readonly faad: Awaited<ReturnType<typeof aacDecoder>>) {}

  decode(chunk: Uint8Array): DecodedChunk | null {
    if (!this.entry) this.findSampleEntry(chunk);
    const result = this.faad.decode(chunk);
    return result.channelData.length > 0 && result.channelData[0]!.length > 0 ? result : null;
  }
  finish(): DecodedChunk | null {
    return null;
  }
  free(): void {
    this.faad.free();
  }
  codec(): Codec {
    return this.entry?.codec ?? 'aac';
  }
  bitDepth(): number | null {
    return this.entry?.bitDepth ?? null;
  }

  private findSampleEntry(chunk: Uint8Array): void {
    // Keep a few bytes of the previous chunk so a box header split across two chunks is still found.
    const bytes = Buffer.concat([this.tail, chunk]);
    const at = bytes.indexOf('stsd', 0, 'latin1');
    if (at >= 0 && at + 40 <= bytes.length) {
      const format = bytes.toString('latin1', at + 16, at + 20);
      this.entry = format === 'alac' ? { codec: 'alac', bitDepth: bytes.readUInt16BE(at + 38) } : { codec: 'aac', bitDepth: null };
      return;
    }
    this.tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - 64)));
  }
}

export async function createDecoder(extension: AudioExtension): Promise<FileDecoder> {
  switch (extension) {
    case 'wav':
      return new WavFileDecoder();
    case 'aif':
    case 'aiff':
      return new AiffDecoder();
    case 'flac': {
      const wasm = new FLACDecoder();
      await wasm.ready;
      return new FlacFileDecoder(wasm);
    }
    case 'mp3':
      return new WasmFileDecoder(await lendMpegDecoder(), 'mp3');
    case 'ogg':
    case 'opus':
      return createOggDecoder(extension);
    case 'aac':
    case 'm4a':
      return new Mp4FileDecoder(await aacDecoder());
  }
}

/**
 * An .ogg file holds Vorbis or Opus: the first page's first packet says which ("\x01vorbis" or "OpusHead",
 * within its first 64 bytes), so the choice waits for those bytes.
 */
function createOggDecoder(extension: 'ogg' | 'opus'): FileDecoder {
  const HEAD_BYTES = 64;
  let head = Buffer.alloc(0);
  let inner: WasmFileDecoder | null = null;
  const start = async (): Promise<WasmFileDecoder> => {
    const opus = extension === 'opus' || head.indexOf('OpusHead', 0, 'latin1') >= 0;
    const wasm = opus ? new OggOpusDecoder() : new OggVorbisDecoder();
    await wasm.ready;
    return new WasmFileDecoder(wasm, opus ? 'opus' : 'vorbis');
  };
  return {
    async decode(chunk: Uint8Array) {
      if (inner) return inner.decode(chunk);
      head = Buffer.concat([head, chunk]);
      if (head.length < HEAD_BYTES) return null;
      inner = await start();
      return inner.decode(head);
    },
    async finish() {
      if (!inner) {
        if (head.length === 0) throw new AnalysisError('empty Ogg file');
        inner = await start();
        const rest = await inner.decode(head);
        if (rest) return rest;
      }
      return inner.finish();
    },
    free() {
      inner?.free();
    },
    codec() {
      return inner?.codec() ?? 'vorbis';
    },
    bitDepth() {
      return null;
    },
  };
}
