import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeAudio } from '../../src/analysis/index.js';
import { downmix } from '../../src/analysis/downmix.js';
import { encodePreview, type PreviewFacts } from '../../src/analysis/preview-encode.js';
import { createResampler } from '../../src/analysis/resample.js';
import { ebur128, generate, hasFfmpeg } from '../analysis/ffmpeg.js';
import { durationSeconds, onsetSeconds, probe, referenceFor, topLevelBoxes } from './fidelity.js';

// Every preview is checked by ffmpeg/ffprobe, the independent reader (§20): codec, container, rate, channels,
// duration within 50 ms, the index before the audio, integrated loudness within 0.3 LU and true peak within
// 0.5 dB of the original (ffmpeg's ebur128), and the first onset within 5 ms of the original's.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-previews-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Half a second of silence, then music-like content: the onset is at exactly 0.5 s. */
const ONSET_SECONDS = 0.5;
const TONES = `if(gte(t\\,${ONSET_SECONDS})\\,0.35*sin(2*PI*997*t)+0.15*sin(2*PI*3001*t)+0.1*sin(2*PI*211*t)\\,0)`;
/**
 * Each channel a little softer than the one before; 5.1 at 40 %, so its BS.775 downmix (up to 2.4 times one
 * channel) stays under full scale, where FFmpeg's AAC encoder, ours included, loses some level (measured: a
 * +2.9 dBFS sine comes back 0.4 LU softer from both).
 */
const tones = (channels: number): string =>
  `aevalsrc=${Array.from({ length: channels }, (_, c) => TONES.replace('0.35', ((channels > 2 ? 0.4 : 1) * (0.35 - 0.03 * c)).toFixed(3))).join('|')}`;

interface Fixture {
  name: string;
  rate: number;
  channels: number;
  options: string[];
  extension: string;
  previewRate: number;
}

const SECONDS = 8;
const fixtures: Fixture[] = [
  { name: '44.1 kHz 16-bit stereo WAV', rate: 44100, channels: 2, options: ['-c:a', 'pcm_s16le'], extension: 'wav', previewRate: 44100 },
  { name: '48 kHz 24-bit mono WAV', rate: 48000, channels: 1, options: ['-c:a', 'pcm_s24le'], extension: 'wav', previewRate: 48000 },
  { name: '96 kHz 32-bit float stereo WAV', rate: 96000, channels: 2, options: ['-c:a', 'pcm_f32le'], extension: 'wav', previewRate: 48000 },
  { name: '48 kHz 24-bit 5.1 WAV', rate: 48000, channels: 6, options: ['-c:a', 'pcm_s24le'], extension: 'wav', previewRate: 48000 },
  { name: '96 kHz 24-bit stereo FLAC', rate: 96000, channels: 2, options: ['-c:a', 'flac', '-sample_fmt', 's32'], extension: 'flac', previewRate: 48000 },
  { name: '44.1 kHz 16-bit 5.1 FLAC', rate: 44100, channels: 6, options: ['-c:a', 'flac', '-sample_fmt', 's16'], extension: 'flac', previewRate: 44100 },
  { name: '44.1 kHz stereo MP3 320k', rate: 44100, channels: 2, options: ['-c:a', 'libmp3lame', '-b:a', '320k'], extension: 'mp3', previewRate: 44100 },
  { name: '48 kHz 24-bit stereo AIFF', rate: 48000, channels: 2, options: ['-c:a', 'pcm_s24be'], extension: 'aiff', previewRate: 48000 },
  { name: '48 kHz stereo M4A (AAC 320k)', rate: 48000, channels: 2, options: ['-c:a', 'aac', '-b:a', '320k'], extension: 'm4a', previewRate: 48000 },
];

describe.skipIf(!hasFfmpeg)('previews against ffmpeg as the independent reader', () => {
  for (const fixture of fixtures) {
    it(`${fixture.name}: AAC-LC in a faststart MP4 matching the original`, async () => {
      const input = path.join(dir, `${fixture.name.replace(/\W+/g, '-')}.${fixture.extension}`);
      generate(tones(fixture.channels), SECONDS, ['-ar', String(fixture.rate), ...(fixture.channels === 6 ? ['-channel_layout', '5.1'] : []), ...fixture.options], input);
      const analysed = await analyzeAudio(input, fixture.extension);
      if (analysed.status !== 'done') throw new Error(`analysis ${analysed.status}`);
      const output = `${input}.m4a`;
      const outcome = await encodePreview(input, fixture.extension, output, { expectedDurationMs: analysed.audio.durationMs });
      if (outcome.status !== 'done') throw new Error(`preview ${outcome.status}: ${'reason' in outcome ? outcome.reason : ''}`);
      const channels = fixture.channels === 1 ? 1 : 2;
      expect(outcome.preview).toMatchObject<Partial<PreviewFacts>>({ sampleRate: fixture.previewRate, channels, bitrate: channels === 1 ? 128_000 : 256_000 });

      const { format, stream } = probe(output);
      expect(stream.codec_name).toBe('aac');
      expect(stream.profile).toBe('LC');
      expect(format.format_name).toContain('mp4');
      expect(Number(stream.sample_rate)).toBe(fixture.previewRate);
      expect(stream.channels).toBe(channels);
      const boxes = await topLevelBoxes(output);
      expect(boxes.indexOf('moov')).toBeGreaterThanOrEqual(0);
      expect(boxes.indexOf('moov')).toBeLessThan(boxes.indexOf('mdat'));

      const original = durationSeconds(input);
      expect(Math.abs(Number(stream.duration) - original)).toBeLessThan(0.05);
      expect(Math.abs(durationSeconds(output) - original)).toBeLessThan(0.05);
      expect(Math.abs(outcome.preview.durationMs / 1000 - original)).toBeLessThan(0.05);

      const reference = referenceFor(input, fixture.channels);
      const [want, got] = [ebur128(reference), ebur128(output)];
      expect(Math.abs(got.integratedLufs - want.integratedLufs)).toBeLessThan(0.3);
      expect(Math.abs(got.truePeakDbtp - want.truePeakDbtp)).toBeLessThan(0.5);
      expect(Math.abs(onsetSeconds(output) - onsetSeconds(reference))).toBeLessThan(0.005);
    });
  }

  it('a file that is not audio fails with a reason, and an unknown type is unsupported', async () => {
    const input = path.join(dir, 'noise.wav');
    await (await open(input, 'w')).writeFile(Buffer.alloc(4096, 7));
    const outcome = await encodePreview(input, 'wav', `${input}.m4a`, { expectedDurationMs: 1000 });
    expect(outcome.status).toBe('failed');
    expect(await encodePreview(input, 'png', `${input}.m4a`, { expectedDurationMs: 1000 })).toEqual({ status: 'unsupported' });
  });
});

describe('downmix and resampling', () => {
  it('folds 5.1 by BS.775: centre and surrounds at -3 dB, the LFE left out', () => {
    const channel = (value: number) => new Float32Array([value]);
    const [left, right] = downmix([channel(0.1), channel(0.2), channel(0.3), channel(0.9), channel(0.4), channel(0.5)], 2);
    expect(left![0]).toBeCloseTo(0.1 + Math.SQRT1_2 * 0.3 + Math.SQRT1_2 * 0.4, 6);
    expect(right![0]).toBeCloseTo(0.2 + Math.SQRT1_2 * 0.3 + Math.SQRT1_2 * 0.5, 6);
  });

  it('resamples 96 kHz to 48 kHz band-limited: a 30 kHz tone (above the new Nyquist) does not fold back to 18 kHz', async () => {
    // Linear interpolation folds 30 kHz to 18 kHz at about -10 dB; a sinc converter's stopband removes it.
    const resampler = await createResampler(1, 96000, 48000);
    const input = new Float32Array(96000);
    for (let i = 0; i < input.length; i++) input[i] = 0.5 * Math.sin((2 * Math.PI * 30000 * i) / 96000);
    const out = new Float32Array([...resampler.push(input), ...resampler.end()]);
    resampler.destroy();
    expect(out.length).toBe(48000);
    // The energy at 18 kHz, by correlation over the middle (away from the edges).
    let re = 0;
    let im = 0;
    for (let i = 4800; i < 43200; i++) {
      re += out[i]! * Math.cos((2 * Math.PI * 18000 * i) / 48000);
      im += out[i]! * Math.sin((2 * Math.PI * 18000 * i) / 48000);
    }
    const amplitude = (2 * Math.hypot(re, im)) / (43200 - 4800);
    expect(20 * Math.log10(amplitude / 0.5)).toBeLessThan(-80);
  });

  it.each([
    [96000, 48000],
    [88200, 44100],
    [192000, 48000],
    [32000, 48000],
  ])('resamples %i Hz to %i Hz in time (no delay) and at level: 1 kHz sample for sample, 20 kHz (under the lower Nyquist) within 0.5 dB', async (from, to) => {
    const tone = async (hz: number) => {
      const resampler = await createResampler(2, from, to);
      const input = new Float32Array(from * 2);
      for (let i = 0; i < from; i++) input[2 * i] = input[2 * i + 1] = 0.5 * Math.sin((2 * Math.PI * hz * i) / from);
      // In pieces of odd sizes, as the decoder hands them over.
      const parts: Float32Array[] = [];
      for (let at = 0, size = 1000; at < input.length; at += size * 2, size = size === 1000 ? 3333 : 1000) parts.push(resampler.push(input.subarray(at, at + size * 2)));
      parts.push(resampler.end());
      resampler.destroy();
      const out = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
      parts.reduce((at, part) => (out.set(part, at), at + part.length), 0);
      return out;
    };
    const low = await tone(1000);
    expect(low.length).toBe(to * 2);
    let worst = 0;
    for (let i = to / 10; i < to - to / 10; i++) worst = Math.max(worst, Math.abs(low[2 * i]! - 0.5 * Math.sin((2 * Math.PI * 1000 * i) / to)));
    expect(worst).toBeLessThan(1e-3);
    const high = await tone(Math.min(20000, 0.4 * from));
    let power = 0;
    for (let i = to / 10; i < to - to / 10; i++) power += high[2 * i + 1]! ** 2;
    const rms = Math.sqrt(power / (to - to / 5));
    expect(Math.abs(20 * Math.log10(rms / (0.5 * Math.SQRT1_2)))).toBeLessThan(0.5);
  });
});
