// Loudness per ITU-R BS.1770-4 / EBU R128, written here because no maintained npm package both streams and
// measures all three figures correctly: gated integrated loudness, loudness range (EBU Tech 3342) and
// 4x-oversampled true peak (BS.1770-4 Annex 2).
//
// Memory is O(duration / 100 ms): the meter keeps one K-weighted energy per 100 ms step and derives the
// 400 ms gating blocks (75 % overlap) and the 3 s short-term windows of the range from those steps.

export interface Loudness {
  integratedLufs: number | null;
  loudnessRangeLu: number | null;
  truePeakDbtp: number | null;
}

/** Biquad coefficients, a0 normalised to 1. */
interface Biquad {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

/**
 * The two K-weighting stages for any sample rate, from the analog prototype behind the 48 kHz coefficients
 * in BS.1770-4 (the same derivation libebur128 and ffmpeg use), so 44.1 and 96 kHz are weighted alike.
 */
function kWeighting(sampleRate: number): [Biquad, Biquad] {
  const shelfK = Math.tan((Math.PI * 1681.974450955533) / sampleRate);
  const shelfQ = 0.7071752369554196;
  const vh = 10 ** (3.999843853973347 / 20);
  const vb = vh ** 0.4996667741545416;
  const shelfA0 = 1 + shelfK / shelfQ + shelfK * shelfK;
  const shelf: Biquad = {
    b0: (vh + (vb * shelfK) / shelfQ + shelfK * shelfK) / shelfA0,
    b1: (2 * (shelfK * shelfK - vh)) / shelfA0,
    b2: (vh - (vb * shelfK) / shelfQ + shelfK * shelfK) / shelfA0,
    a1: (2 * (shelfK * shelfK - 1)) / shelfA0,
    a2: (1 - shelfK / shelfQ + shelfK * shelfK) / shelfA0,
  };
  const passK = Math.tan((Math.PI * 38.13547087602444) / sampleRate);
  const passQ = 0.5003270373238773;
  const passA0 = 1 + passK / passQ + passK * passK;
  const highPass: Biquad = {
    b0: 1,
    b1: -2,
    b2: 1,
    a1: (2 * (passK * passK - 1)) / passA0,
    a2: (1 - passK / passQ + passK * passK) / passA0,
  };
  return [shelf, highPass];
}

/** BS.1770-4 channel weights for the usual layouts: surround channels +1.5 dB, the LFE left out. */
function channelWeights(channels: number): number[] {
  if (channels === 6) return [1, 1, 1, 0, 1.41, 1.41];
  if (channels === 5) return [1, 1, 1, 1.41, 1.41];
  return Array.from({ length: channels }, () => 1);
}

const TAPS_PER_PHASE = 24;
const OVERSAMPLING = 4;

/**
 * The three interpolating branches (offsets 1/4, 2/4, 3/4 of a sample) of a polyphase 4x upsampler: a
 * Kaiser-windowed sinc cut at the input's Nyquist frequency. The fourth branch would return the input
 * samples themselves, so the meter takes those as they are. Each branch's taps are ordered oldest input
 * first, to run along the history window; all of them interpolate between the same two samples, the
 * window's middle ones.
 */
function truePeakPhases(): [Float64Array, Float64Array, Float64Array] {
  const beta = 8;
  const halfWidth = TAPS_PER_PHASE / 2 + 1;
  const besselI0 = (x: number): number => {
    let sum = 1;
    let term = 1;
    for (let k = 1; k < 30; k += 1) {
      term *= (x / (2 * k)) ** 2;
      sum += term;
    }
    return sum;
  };
  const branch = (phase: number): Float64Array => {
    const taps = new Float64Array(TAPS_PER_PHASE);
    for (let i = 0; i < TAPS_PER_PHASE; i += 1) {
      // Distance from input sample i to the interpolated point, which lies `phase` quarters past the middle.
      const t = TAPS_PER_PHASE / 2 - 1 + phase / OVERSAMPLING - i;
      const sinc = Math.sin(Math.PI * t) / (Math.PI * t);
      const ratio = t / halfWidth;
      taps[i] = (sinc * besselI0(beta * Math.sqrt(1 - ratio * ratio))) / besselI0(beta);
    }
    return taps;
  };
  return [branch(1), branch(2), branch(3)];
}

const [PHASE1, PHASE2, PHASE3] = truePeakPhases();

/**
 * No interpolated value exceeds the largest input magnitude in its window times this (the largest sum of
 * absolute taps of a branch). A block whose inputs stay below truePeak / PHASE_GAIN cannot raise the true
 * peak, so the meter skips its interpolation: most blocks of most programmes, the costly part of the meter.
 */
const PHASE_GAIN = Math.max(...[PHASE1, PHASE2, PHASE3].map((taps) => taps.reduce((sum, tap) => sum + Math.abs(tap), 0)));
const PEAK_BLOCK = 64;

class ChannelState {
  /** Filter memories of the two K-weighting stages (direct form I). */
  x1 = 0;
  x2 = 0;
  y1 = 0;
  y2 = 0;
  z1 = 0;
  z2 = 0;
  /** The previous chunk's last TAPS_PER_PHASE samples, then the current chunk: the interpolator's input. */
  window = new Float64Array(TAPS_PER_PHASE);
  truePeak = 0;
}

export class LoudnessMeter {
  private readonly shelf: Biquad;
  private readonly highPass: Biquad;
  private readonly weights: number[];
  private readonly states: ChannelState[];
  private readonly stepLength: number;
  /** Weighted sum over channels of the squared K-weighted samples of the current 100 ms step. */
  private stepSum = 0;
  private stepFill = 0;
  /** Mean square (channel-weighted) of each complete 100 ms step. */
  private steps: number[] = [];

  constructor(
    readonly sampleRate: number,
    readonly channels: number,
  ) {
    [this.shelf, this.highPass] = kWeighting(sampleRate);
    this.weights = channelWeights(channels);
    this.states = Array.from({ length: channels }, () => new ChannelState());
    this.stepLength = Math.round(sampleRate / 10);
  }

  /** Feeds one chunk: one Float32Array per channel, all of the same length. */
  add(channelData: readonly Float32Array[]): void {
    const frames = channelData[0]?.length ?? 0;
    for (let channel = 0; channel < this.channels; channel += 1) trackTruePeak(channelData[channel]!, this.states[channel]!);
    let offset = 0;
    while (offset < frames) {
      const count = Math.min(frames - offset, this.stepLength - this.stepFill);
      for (let channel = 0; channel < this.channels; channel += 1) {
        this.stepSum += this.weights[channel]! * this.filter(channelData[channel]!, offset, count, this.states[channel]!);
      }
      offset += count;
      this.stepFill += count;
      if (this.stepFill === this.stepLength) {
        this.steps.push(this.stepSum / this.stepLength);
        this.stepSum = 0;
        this.stepFill = 0;
      }
    }
  }

  /** K-weights `count` samples and returns their sum of squares. */
  private filter(samples: Float32Array, offset: number, count: number, state: ChannelState): number {
    const { b0, b1, b2, a1, a2 } = this.shelf;
    const p = this.highPass;
    let { x1, x2, y1, y2, z1, z2 } = state;
    let sum = 0;
    for (let i = offset; i < offset + count; i += 1) {
      const x = samples[i]!;
      const y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
      x2 = x1;
      x1 = x;
      const z = y - 2 * y1 + y2 - p.a1 * z1 - p.a2 * z2;
      y2 = y1;
      y1 = y;
      z2 = z1;
      z1 = z;
      sum += z * z;
    }
    Object.assign(state, { x1, x2, y1, y2, z1, z2 });
    return sum;
  }

  result(): Loudness {
    const truePeak = Math.max(0, ...this.states.map((state) => state.truePeak));
    return {
      integratedLufs: this.integrated(),
      loudnessRangeLu: this.range(),
      truePeakDbtp: truePeak > 0 ? round(20 * Math.log10(truePeak), 2) : null,
    };
  }

  /** Mean squares of the windows of `length` steps that advance one step (100 ms) at a time. */
  private windows(length: number): number[] {
    const energies: number[] = [];
    let sum = 0;
    for (let i = 0; i < this.steps.length; i += 1) {
      sum += this.steps[i]!;
      if (i >= length) sum -= this.steps[i - length]!;
      if (i >= length - 1) energies.push(Math.max(sum, 0) / length);
    }
    return energies;
  }

  private integrated(): number | null {
    const blocks = this.windows(4).filter((energy) => lufs(energy) > -70);
    if (blocks.length === 0) return null;
    const threshold = lufs(mean(blocks)) - 10;
    const gated = blocks.filter((energy) => lufs(energy) > threshold);
    return round(lufs(mean(gated)), 2);
  }

  private range(): number | null {
    const shortTerm = this.windows(30).filter((energy) => lufs(energy) > -70);
    if (shortTerm.length === 0) return null;
    const threshold = lufs(mean(shortTerm)) - 20;
    const gated = shortTerm
      .filter((energy) => lufs(energy) > threshold)
      .map(lufs)
      .sort((a, b) => a - b);
    const at = (fraction: number): number => gated[Math.round(fraction * (gated.length - 1))]!;
    return round(at(0.95) - at(0.1), 2);
  }
}

/** Raises the channel's true peak to the largest sample or 4x-interpolated value of the chunk. */
function trackTruePeak(samples: Float32Array, state: ChannelState): void {
  const frames = samples.length;
  if (state.window.length < TAPS_PER_PHASE + frames) {
    const grown = new Float64Array(TAPS_PER_PHASE + frames);
    grown.set(state.window.subarray(0, TAPS_PER_PHASE));
    state.window = grown;
  }
  const window = state.window;
  window.set(samples, TAPS_PER_PHASE);
  let peak = state.truePeak;
  for (let start = 0; start < frames; start += PEAK_BLOCK) {
    const end = Math.min(frames, start + PEAK_BLOCK);
    // Output j interpolates over window[j + 1 ... j + TAPS_PER_PHASE], whose newest sample is samples[j].
    let largest = 0;
    for (let i = start + 1; i <= end + TAPS_PER_PHASE - 1; i += 1) {
      const magnitude = Math.abs(window[i]!);
      if (magnitude > largest) largest = magnitude;
    }
    if (largest * PHASE_GAIN <= peak) continue;
    for (let j = start; j < end; j += 1) {
      let p1 = 0;
      let p2 = 0;
      let p3 = 0;
      for (let k = 0; k < TAPS_PER_PHASE; k += 1) {
        const past = window[j + 1 + k]!;
        p1 += PHASE1[k]! * past;
        p2 += PHASE2[k]! * past;
        p3 += PHASE3[k]! * past;
      }
      const value = Math.max(Math.abs(window[j + TAPS_PER_PHASE]!), Math.abs(p1), Math.abs(p2), Math.abs(p3));
      if (value > peak) peak = value;
    }
  }
  state.truePeak = peak;
  window.copyWithin(0, frames, frames + TAPS_PER_PHASE);
}

function lufs(meanSquare: number): number {
  return -0.691 + 10 * Math.log10(meanSquare);
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function round(value: number, decimals: number): number {
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}
