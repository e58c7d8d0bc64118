import { describe, expect, it } from 'vitest';
import { LoudnessMeter } from '../../src/analysis/loudness.js';
import { MAX_POINTS, PeakReducer } from '../../src/analysis/peaks.js';

// The meter on the reference cases of EBU Tech 3341 / 3342 and BS.1770-4, with signals computed here, so
// it is tested without ffmpeg too (the analysis tests compare it with ffmpeg's ebur128 on real files).

function sine(sampleRate: number, seconds: number, amplitudeDbfs: number, frequency = 1000, phase = 0): Float32Array {
  const amplitude = 10 ** (amplitudeDbfs / 20);
  return samples(Math.round(sampleRate * seconds), (i) => amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate + phase));
}

/** `length` samples of `at(i)`: a plain loop, about five times faster than Float32Array.from over millions of them. */
function samples(length: number, at: (i: number) => number): Float32Array {
  const out = new Float32Array(length);
  for (let i = 0; i < length; i += 1) out[i] = at(i);
  return out;
}

function concat(...parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Feeds a stereo signal (the same in both channels) in chunks of `chunk` frames. */
function measure(sampleRate: number, signal: Float32Array, chunk = 4096): LoudnessMeter {
  const meter = new LoudnessMeter(sampleRate, 2);
  for (let at = 0; at < signal.length; at += chunk) {
    const part = signal.subarray(at, at + chunk);
    meter.add([part, part]);
  }
  return meter;
}

describe('LoudnessMeter', () => {
  for (const sampleRate of [44100, 48000, 96000]) {
    it(`reads a stereo 1 kHz sine at -23 dBFS as -23 LUFS at ${sampleRate} Hz (Tech 3341 case 1)`, () => {
      expect(measure(sampleRate, sine(sampleRate, 20, -23)).result().integratedLufs).toBeCloseTo(-23, 1);
    });
  }

  it('gates: 10 s at -36 dBFS, 60 s at -23, 10 s at -36 still read -23 LUFS (Tech 3341 case 3)', () => {
    const signal = concat(sine(48000, 10, -36), sine(48000, 60, -23), sine(48000, 10, -36));
    expect(measure(48000, signal).result().integratedLufs).toBeCloseTo(-23, 1);
  });

  it('reads -26/-20/-26 dBFS (20 s, 20.1 s, 20 s) as -23 ±0.1 LUFS (Tech 3341 case 5)', () => {
    const signal = concat(sine(48000, 20, -26), sine(48000, 20.1, -20), sine(48000, 20, -26));
    expect(Math.abs(measure(48000, signal).result().integratedLufs! + 23)).toBeLessThanOrEqual(0.1);
  });

  it('leaves silent blocks (under -70 LUFS) out: silence around the programme changes little', () => {
    const signal = concat(new Float32Array(48000 * 20), sine(48000, 20, -23), new Float32Array(48000 * 20));
    expect(Math.abs(measure(48000, signal).result().integratedLufs! + 23)).toBeLessThanOrEqual(0.1);
  });

  it('measures 20 s at -20 dBFS then 20 s at -30 dBFS as a 10 LU range (Tech 3342 case 1)', () => {
    const signal = concat(sine(48000, 20, -20), sine(48000, 20, -30));
    expect(Math.abs(measure(48000, signal).result().loudnessRangeLu! - 10)).toBeLessThanOrEqual(1);
  });

  it('measures -20/-15 dBFS as 5 LU and -40/-20 dBFS as 20 LU (Tech 3342 cases 2 and 3)', () => {
    expect(Math.abs(measure(48000, concat(sine(48000, 20, -20), sine(48000, 20, -15))).result().loudnessRangeLu! - 5)).toBeLessThanOrEqual(1);
    expect(Math.abs(measure(48000, concat(sine(48000, 20, -40), sine(48000, 20, -20))).result().loudnessRangeLu! - 20)).toBeLessThanOrEqual(1);
  });

  it('finds the true peak between samples: a sine at fs/4 sampled 45 degrees off its crests (BS.1770-4 Annex 2)', () => {
    // Every sample is at ±0.707 of the amplitude (-3 dB), the waveform reaches 0 dBFS between them.
    const signal = sine(48000, 1, 0, 12000, Math.PI / 4);
    const { truePeakDbtp } = measure(48000, signal).result();
    expect(truePeakDbtp).toBeGreaterThan(-0.2);
    expect(truePeakDbtp).toBeLessThan(0.2);
  });

  it('gives the same figures whatever the chunk size', () => {
    const signal = concat(sine(44100, 5, -12, 997), sine(44100, 5, -30, 3000));
    const whole = measure(44100, signal, signal.length).result();
    for (const chunk of [1, 7, 4410, 65536]) expect(measure(44100, signal, chunk).result()).toEqual(whole);
  });

  it('has nothing to report for silence', () => {
    expect(measure(48000, new Float32Array(48000 * 5)).result()).toEqual({ integratedLufs: null, loudnessRangeLu: null, truePeakDbtp: null });
  });
});

describe('PeakReducer', () => {
  it('keeps 1000 to 2000 min/max pairs whatever the length and the chunking', () => {
    const cases: [frames: number, chunk: number][] = [[1000, 1000], [2001, 3], [44100 * 3, 4096], [48000 * 60 * 7 + 13, 65536]];
    for (const [frames, chunk] of cases) {
      const reducer = new PeakReducer(48000);
      const signal = samples(frames, (i) => Math.sin(i / 50));
      for (let at = 0; at < frames; at += chunk) reducer.add([signal.subarray(at, at + chunk)]);
      const peaks = reducer.result();
      expect(peaks.length).toBeGreaterThanOrEqual(1000);
      expect(peaks.length).toBeLessThanOrEqual(MAX_POINTS);
      expect(peaks.length * peaks.samples_per_pixel).toBeGreaterThanOrEqual(frames);
      expect((peaks.length - 1) * peaks.samples_per_pixel).toBeLessThan(frames);
    }
  });

  it('writes each pixel as the min and max over all channels, in 8 bits', () => {
    const reducer = new PeakReducer(8000);
    const left = new Float32Array(1024).fill(0.5);
    const right = new Float32Array(1024).fill(-1);
    left[3] = 1;
    reducer.add([left, right]);
    const peaks = reducer.result();
    expect(peaks).toMatchObject({ version: 2, channels: 1, sample_rate: 8000, bits: 8, samples_per_pixel: 1, length: 1024 });
    expect(peaks.data.slice(0, 8)).toEqual([-128, 64, -128, 64, -128, 64, -128, 127]);
  });
});
