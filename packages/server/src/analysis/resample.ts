// Sample-rate conversion for previews: the Speex resampler (SpeexDSP's, BSD-3, compiled to WASM with SIMD,
// @echogarden/speex-resampler-wasm), a band-limited windowed-sinc converter, never linear interpolation, which
// folds everything above the new Nyquist frequency back into the audible band. Quality 7: 128 taps, a Kaiser
// window, a 93 % passband (22.3 kHz at 48 kHz) and about 100 dB of stopband attenuation, far under what AAC at
// 256 kbps keeps. Chosen by measurement (4 minutes of 96 kHz stereo resampled to 48 kHz, CPU time, one core,
// this machine; README "Listening"): libsamplerate's SRC_SINC_MEDIUM_QUALITY 4.6 s, its SRC_SINC_FASTEST (80 %
// passband, 97 dB) 1.9 s, Speex quality 5 0.39 s, 7 0.61 s, 10 3.0 s.
// The module's types, for every program that compiles this file (the SDK's tests include the server's sources).
/// <reference path="./speex-resampler-wasm.d.ts" />
import loadSpeex, { type SpeexModule } from '@echogarden/speex-resampler-wasm/simd';

/** The rates a preview is made at (§20): 44.1 kHz for the 44.1 kHz family, else 48 kHz. */
export function previewSampleRate(inputRate: number): 44_100 | 48_000 {
  return inputRate % 11_025 === 0 ? 44_100 : 48_000;
}

/** Interleaved frames in, interleaved frames out, with the converter's state carried between calls. */
export interface Resampler {
  push(interleaved: Float32Array): Float32Array;
  /** The frames still held in the converter's filter, so the output has exactly round(input × ratio) frames. */
  end(): Float32Array;
  destroy(): void;
}

const QUALITY = 7;
/** Frames handed to the converter a call; the WASM buffers are sized for them. */
const FRAMES_PER_CALL = 16_384;

/** One module per thread, loaded on first use. */
let speex: Promise<SpeexModule> | null = null;

export async function createResampler(channels: number, inputRate: number, outputRate: number): Promise<Resampler> {
  const module = await (speex ??= loadSpeex());
  const ratio = outputRate / inputRate;
  const outCapacity = Math.ceil(FRAMES_PER_CALL * ratio) + 64;
  const error = module._malloc(4);
  const lengths = module._malloc(8);
  const input = module._malloc(FRAMES_PER_CALL * channels * 4);
  const output = module._malloc(outCapacity * channels * 4);
  const state = module._speex_resampler_init(channels, inputRate, outputRate, QUALITY, error);
  if (state === 0) {
    for (const pointer of [error, lengths, input, output]) module._free(pointer);
    throw new Error(`the resampler refused ${inputRate} → ${outputRate} Hz (${channels} channels)`);
  }
  // The filter's delay is skipped at the start, so the output begins on the input's first sample.
  module._speex_resampler_skip_zeros(state);
  let destroyed = false;
  let inputFrames = 0;
  let outputFrames = 0;
  const convert = (interleaved: Float32Array): Float32Array => {
    const parts: Float32Array[] = [];
    for (let at = 0; at < interleaved.length; ) {
      const frames = Math.min(FRAMES_PER_CALL, (interleaved.length - at) / channels);
      // The heap views are read at each call: a growing WASM memory replaces them.
      module.HEAPF32.set(interleaved.subarray(at, at + frames * channels), input >> 2);
      module.HEAP32[lengths >> 2] = frames;
      module.HEAP32[(lengths >> 2) + 1] = outCapacity;
      module._speex_resampler_process_interleaved_float(state, input, lengths, output, lengths + 4);
      const consumed = module.HEAP32[lengths >> 2]!;
      const produced = module.HEAP32[(lengths >> 2) + 1]!;
      if (consumed === 0) throw new Error('the resampler took no input');
      parts.push(module.HEAPF32.slice(output >> 2, (output >> 2) + produced * channels));
      at += consumed * channels;
    }
    return concat(parts);
  };
  return {
    push(interleaved) {
      inputFrames += interleaved.length / channels;
      const out = convert(interleaved);
      outputFrames += out.length / channels;
      return out;
    },
    end() {
      const expected = Math.round(inputFrames * ratio);
      const parts: Float32Array[] = [];
      // Zeros push the filter's last frames out: its input latency's worth, a round or two.
      const flush = new Float32Array(Math.max(module._speex_resampler_get_input_latency(state), 1024) * channels);
      for (let round = 0; outputFrames < expected && round < 8; round++) {
        const out = convert(flush);
        const wanted = Math.min(out.length / channels, expected - outputFrames);
        parts.push(out.subarray(0, wanted * channels));
        outputFrames += wanted;
      }
      return concat(parts);
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      module._speex_resampler_destroy(state);
      for (const pointer of [error, lengths, input, output]) module._free(pointer);
    },
  };
}

function concat(parts: Float32Array[]): Float32Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
