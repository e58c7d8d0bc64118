import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeAudio, type AudioAnalysis } from '../../src/analysis/index.js';
import { ebur128, generate, hasFfmpeg } from './ffmpeg.js';

// AIFF and AIFF-C (`NONE`, `sowt`) as CUT files (§6): fixtures made by ffmpeg in the test; ffprobe is the
// oracle for the format, ffmpeg's ebur128 for the loudness (as for WAV and FLAC), and the same samples as a
// WAV must give the same waveform.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-aiff-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function done(result: AudioAnalysis): Extract<AudioAnalysis, { status: 'done' }> {
  if (result.status !== 'done') throw new Error(`analysis ${result.status}: ${'reason' in result ? result.reason : ''}`);
  return result;
}

/** ffprobe's view of the first audio stream. */
function probe(file: string): { sampleRate: number; channels: number; bitsPerSample: number; durationMs: number } {
  const out = execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'stream=sample_rate,channels,bits_per_sample,duration', '-of', 'json', file], { encoding: 'utf8' });
  const stream = JSON.parse(out).streams[0];
  return { sampleRate: Number(stream.sample_rate), channels: stream.channels, bitsPerSample: stream.bits_per_sample, durationMs: Math.round(Number(stream.duration) * 1000) };
}

/**
 * An AIFF rewritten as AIFF-C with compression `NONE` (ffmpeg writes plain AIFF for big-endian PCM): FORM type
 * AIFC, an FVER chunk, and the COMM chunk extended with the compression type and its name; the rest unchanged.
 */
function asAifcNone(aiff: Buffer): Buffer {
  const chunks: Buffer[] = [Buffer.from('AIFC', 'latin1')];
  const fver = Buffer.alloc(12);
  fver.write('FVER', 0, 'latin1');
  fver.writeUInt32BE(4, 4);
  fver.writeUInt32BE(0xa2805140, 8);
  chunks.push(fver);
  for (let at = 12; at + 8 <= aiff.length; ) {
    const id = aiff.toString('latin1', at, at + 4);
    const size = aiff.readUInt32BE(at + 4);
    const body = aiff.subarray(at + 8, at + 8 + size);
    if (id === 'COMM') {
      const name = Buffer.from('\x0enot compressed\x00', 'latin1'); // a Pascal string padded to an even length
      const comm = Buffer.concat([body, Buffer.from('NONE', 'latin1'), name]);
      const head = Buffer.alloc(8);
      head.write('COMM', 0, 'latin1');
      head.writeUInt32BE(comm.length, 4);
      chunks.push(head, comm);
    } else {
      chunks.push(aiff.subarray(at, at + 8 + size + (size % 2)));
    }
    at += 8 + size + (size % 2);
  }
  const form = Buffer.concat(chunks);
  const head = Buffer.alloc(8);
  head.write('FORM', 0, 'latin1');
  head.writeUInt32BE(form.length, 4);
  return Buffer.concat([head, form]);
}

const SINE_STEREO = 'aevalsrc=0.5*sin(2*PI*997*t)|0.25*sin(2*PI*440*t)';
const PINK = 'anoisesrc=color=pink:amplitude=0.3:seed=7';

interface Fixture {
  name: string;
  source: string;
  rate: number;
  channels: number;
  bitDepth: number;
  /** The ffmpeg codec of the AIFF, and of a WAV holding the same samples. */
  codec: string;
  wavCodec: string;
  extension: 'aif' | 'aiff';
  aifcNone?: boolean;
}

const fixtures: Fixture[] = [
  { name: 'sine 48 kHz 16-bit stereo AIFF', source: SINE_STEREO, rate: 48000, channels: 2, bitDepth: 16, codec: 'pcm_s16be', wavCodec: 'pcm_s16le', extension: 'aiff' },
  { name: 'pink noise 44.1 kHz 24-bit mono AIFF', source: PINK, rate: 44100, channels: 1, bitDepth: 24, codec: 'pcm_s24be', wavCodec: 'pcm_s24le', extension: 'aif' },
  { name: 'sine 96 kHz 32-bit stereo AIFF', source: SINE_STEREO, rate: 96000, channels: 2, bitDepth: 32, codec: 'pcm_s32be', wavCodec: 'pcm_s32le', extension: 'aiff' },
  { name: 'pink noise 48 kHz 16-bit stereo AIFF-C sowt', source: PINK, rate: 48000, channels: 2, bitDepth: 16, codec: 'pcm_s16le', wavCodec: 'pcm_s16le', extension: 'aif' },
  { name: 'pink noise 48 kHz 24-bit stereo AIFF-C NONE', source: PINK, rate: 48000, channels: 2, bitDepth: 24, codec: 'pcm_s24be', wavCodec: 'pcm_s24le', extension: 'aiff', aifcNone: true },
  { name: 'sine 44.1 kHz 8-bit mono AIFF (signed, unlike WAV)', source: SINE_STEREO, rate: 44100, channels: 1, bitDepth: 8, codec: 'pcm_s8', wavCodec: 'pcm_u8', extension: 'aiff' },
];

describe.skipIf(!hasFfmpeg)('AIFF analysis against ffprobe and ffmpeg ebur128', () => {
  for (const fixture of fixtures) {
    it(`${fixture.name}: format as ffprobe reads it, loudness within the oracle's tolerances, the WAV's waveform`, async () => {
      const base = path.join(dir, fixture.name.replace(/\W+/g, '-'));
      const file = `${base}.${fixture.extension}`;
      const layout = fixture.channels === 1 ? 'mono' : 'stereo';
      const options = ['-ac', String(fixture.channels), '-ar', String(fixture.rate), '-channel_layout', layout];
      generate(`${fixture.source}:sample_rate=${fixture.rate}`, 5, [...options, '-c:a', fixture.codec, '-f', 'aiff'], file);
      if (fixture.aifcNone) await writeFile(file, asAifcNone(await readFile(file)));
      const header = (await readFile(file)).toString('latin1', 8, 12);
      expect(header).toBe(fixture.aifcNone || fixture.codec === 'pcm_s16le' ? 'AIFC' : 'AIFF');
      const probed = probe(file);
      const oracle = ebur128(file);

      const { audio, peaks } = done(await analyzeAudio(file, fixture.extension));

      expect(audio).toMatchObject({ codec: 'pcm', sampleRate: probed.sampleRate, channels: probed.channels, bitDepth: probed.bitsPerSample, durationMs: probed.durationMs });
      expect([audio.sampleRate, audio.channels, audio.bitDepth, audio.durationMs]).toEqual([fixture.rate, fixture.channels, fixture.bitDepth, 5000]);
      expect(audio.bitrate).toBe(fixture.rate * fixture.bitDepth * fixture.channels);
      // ffmpeg prints one decimal: its figure is ±0.05 of the true one.
      expect(Math.abs(audio.loudness.integratedLufs! - oracle.integratedLufs)).toBeLessThanOrEqual(0.1 + 0.05);
      expect(Math.abs(audio.loudness.truePeakDbtp! - oracle.truePeakDbtp)).toBeLessThanOrEqual(0.2 + 0.05);
      expect(Math.abs(audio.loudness.loudnessRangeLu! - oracle.loudnessRangeLu)).toBeLessThanOrEqual(1);

      // The same samples as a WAV: the same waveform, the same loudness.
      const wav = `${base}.wav`;
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', file, '-c:a', fixture.wavCodec, wav]);
      const asWav = done(await analyzeAudio(wav, 'wav'));
      expect(peaks).toEqual(asWav.peaks);
      expect(audio.loudness).toEqual(asWav.audio.loudness);
    });
  }

  it('fails a truncated AIFF, and AIFF-C compressions other than NONE and sowt, naming why', async () => {
    const file = path.join(dir, 'cut.aiff');
    generate(`${PINK}:sample_rate=48000`, 2, ['-c:a', 'pcm_s16be', '-f', 'aiff'], file);
    await truncate(file, 100_000);
    const truncated = await analyzeAudio(file, 'aiff');
    expect(truncated).toMatchObject({ status: 'failed', reason: expect.stringMatching(/truncated AIFF/) });

    const float = path.join(dir, 'float.aiff');
    generate(`${PINK}:sample_rate=48000`, 1, ['-c:a', 'pcm_f32be', '-f', 'aiff'], float);
    expect(await analyzeAudio(float, 'aiff')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/unsupported AIFF-C compression "fl32"/) });
  });
});
