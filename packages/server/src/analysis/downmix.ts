// More than two channels fold to stereo by ITU-R BS.775's downmix (§20): Lo = L + 0.7071·C + 0.7071·Ls,
// Ro = R + 0.7071·C + 0.7071·Rs; the LFE channel is left out, as BS.775 does. Channels are in the WAVE order
// the decoders give (WAVEFORMATEXTENSIBLE's default masks, which FLAC shares): FL FR FC LFE BL BR SL SR. No
// normalisation: the preview keeps the loudness of the downmix a listener's stereo playback would make.
// Mono stays mono and stereo stays stereo.

const MINUS_3_DB = Math.SQRT1_2;

/** Per input channel, its weight in the left and the right output: [left, right]. */
type Weights = readonly (readonly [number, number])[];

const L: readonly [number, number] = [1, 0];
const R: readonly [number, number] = [0, 1];
const C: readonly [number, number] = [MINUS_3_DB, MINUS_3_DB];
const LFE: readonly [number, number] = [0, 0];
const SL: readonly [number, number] = [MINUS_3_DB, 0];
const SR: readonly [number, number] = [0, MINUS_3_DB];
/** A single rear centre (6.1) feeds both surrounds, each at −3 dB, so each output at −6 dB. */
const CS: readonly [number, number] = [0.5, 0.5];

/** The layouts by channel count: 3.0, quad, 5.0, 5.1, 6.1, 7.1. */
const LAYOUTS: Record<number, Weights> = {
  3: [L, R, C],
  4: [L, R, SL, SR],
  5: [L, R, C, SL, SR],
  6: [L, R, C, LFE, SL, SR],
  7: [L, R, C, LFE, CS, SL, SR],
  8: [L, R, C, LFE, SL, SR, SL, SR],
};

/** The channels of a preview of `inputChannels`: mono stays mono, the rest is stereo. */
export function previewChannels(inputChannels: number): 1 | 2 {
  return inputChannels === 1 ? 1 : 2;
}

/**
 * `channels` (planar) as `to` channels. Beyond 8 channels no layout is known: the first two are taken as L and R
 * and the rest left out.
 */
export function downmix(channels: Float32Array[], to: 1 | 2): Float32Array[] {
  if (channels.length === to) return channels;
  if (channels.length <= 2 || !(channels.length in LAYOUTS)) return channels.slice(0, 2);
  const weights = LAYOUTS[channels.length]!;
  const frames = channels[0]!.length;
  const left = new Float32Array(frames);
  const right = new Float32Array(frames);
  for (let c = 0; c < channels.length; c++) {
    const [toLeft, toRight] = weights[c]!;
    const channel = channels[c]!;
    if (toLeft !== 0) for (let i = 0; i < frames; i++) left[i]! += toLeft * channel[i]!;
    if (toRight !== 0) for (let i = 0; i < frames; i++) right[i]! += toRight * channel[i]!;
  }
  return [left, right];
}
