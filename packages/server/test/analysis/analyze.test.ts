import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { analyzeAudio, type AudioAnalysis } from '../../src/analysis/index.js';
import { analysisBudgetSeconds } from '../../src/analysis/isolated.js';
import { localFileSource } from '../../src/core/store/fs-store.js';
import { emptyBoxesM4a, flacBomb } from './bombs.js';
import { ebur128, ffprobeStream, generate, hasFfmpeg } from './ffmpeg.js';

// Fixtures are made by ffmpeg in the test; ffmpeg's ebur128 filter (peak=true) is the oracle the contract
// names: integrated within 0.1 LU, true peak within 0.2 dB, loudness range within 1 LU.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-analysis-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function done(result: AudioAnalysis): Extract<AudioAnalysis, { status: 'done' }> {
  if (result.status !== 'done') throw new Error(`analysis ${result.status}: ${'reason' in result ? result.reason : ''}`);
  return result;
}

const SINE_STEREO = 'aevalsrc=0.5*sin(2*PI*997*t)|0.25*sin(2*PI*440*t)';
const PINK = 'anoisesrc=color=pink:amplitude=0.3:seed=7';
const SQUARE = 'aevalsrc=if(lt(mod(t*441\\,1)\\,0.5)\\,1\\,-1)';
// Ten seconds loud, ten seconds 20 dB softer, twice: a loudness range near 20 LU.
const STEPS = 'aevalsrc=(0.05+0.45*lt(mod(t\\,20)\\,10))*sin(2*PI*1000*t)';

interface Fixture {
  name: string;
  source: string;
  rate: number;
  channels: number;
  seconds: number;
  options: string[];
  extension: string;
  codec: string;
  bitDepth: number | null;
  /** Lossless files keep every sample: the duration is exact. Lossy ones may differ by encoder padding. */
  lossless: boolean;
}

const fixtures: Fixture[] = [
  { name: 'sine 48 kHz 16-bit stereo WAV', source: SINE_STEREO, rate: 48000, channels: 2, seconds: 6, options: ['-c:a', 'pcm_s16le'], extension: 'wav', codec: 'pcm', bitDepth: 16, lossless: true },
  { name: 'pink noise 44.1 kHz 24-bit mono WAV', source: PINK, rate: 44100, channels: 1, seconds: 6, options: ['-c:a', 'pcm_s24le'], extension: 'wav', codec: 'pcm', bitDepth: 24, lossless: true },
  { name: 'pink noise 96 kHz 32-bit float stereo WAV', source: PINK, rate: 96000, channels: 2, seconds: 5, options: ['-c:a', 'pcm_f32le'], extension: 'wav', codec: 'pcm-float', bitDepth: 32, lossless: true },
  { name: 'sine 44.1 kHz 32-bit integer stereo WAV', source: SINE_STEREO, rate: 44100, channels: 2, seconds: 5, options: ['-c:a', 'pcm_s32le'], extension: 'wav', codec: 'pcm', bitDepth: 32, lossless: true },
  { name: 'clipping square 44.1 kHz 16-bit mono WAV', source: SQUARE, rate: 44100, channels: 1, seconds: 5, options: ['-c:a', 'pcm_s16le'], extension: 'wav', codec: 'pcm', bitDepth: 16, lossless: true },
  { name: 'loudness steps 48 kHz 24-bit mono WAV', source: STEPS, rate: 48000, channels: 1, seconds: 40, options: ['-c:a', 'pcm_s24le'], extension: 'wav', codec: 'pcm', bitDepth: 24, lossless: true },
  { name: 'pink noise 48 kHz 24-bit stereo FLAC', source: PINK, rate: 48000, channels: 2, seconds: 6, options: ['-c:a', 'flac', '-sample_fmt', 's32'], extension: 'flac', codec: 'flac', bitDepth: 24, lossless: true },
  { name: 'sine 44.1 kHz 16-bit stereo FLAC', source: SINE_STEREO, rate: 44100, channels: 2, seconds: 6, options: ['-c:a', 'flac', '-sample_fmt', 's16'], extension: 'flac', codec: 'flac', bitDepth: 16, lossless: true },
  { name: 'pink noise 44.1 kHz stereo MP3 320k', source: PINK, rate: 44100, channels: 2, seconds: 6, options: ['-c:a', 'libmp3lame', '-b:a', '320k'], extension: 'mp3', codec: 'mp3', bitDepth: null, lossless: false },
  { name: 'pink noise 48 kHz stereo Ogg Vorbis', source: PINK, rate: 48000, channels: 2, seconds: 6, options: ['-c:a', 'libvorbis', '-q:a', '6'], extension: 'ogg', codec: 'vorbis', bitDepth: null, lossless: false },
  { name: 'pink noise 48 kHz stereo Ogg Opus', source: PINK, rate: 48000, channels: 2, seconds: 6, options: ['-c:a', 'libopus', '-b:a', '192k'], extension: 'opus', codec: 'opus', bitDepth: null, lossless: false },
  { name: 'pink noise 48 kHz stereo Opus in .ogg', source: PINK, rate: 48000, channels: 2, seconds: 6, options: ['-c:a', 'libopus', '-b:a', '192k'], extension: 'ogg', codec: 'opus', bitDepth: null, lossless: false },
  { name: 'pink noise 44.1 kHz stereo AAC (ADTS)', source: PINK, rate: 44100, channels: 2, seconds: 6, options: ['-c:a', 'aac', '-b:a', '256k', '-f', 'adts'], extension: 'aac', codec: 'aac', bitDepth: null, lossless: false },
  { name: 'pink noise 48 kHz stereo AAC in M4A', source: PINK, rate: 48000, channels: 2, seconds: 6, options: ['-c:a', 'aac', '-b:a', '256k'], extension: 'm4a', codec: 'aac', bitDepth: null, lossless: false },
  { name: 'sine 44.1 kHz 16-bit stereo ALAC in M4A', source: SINE_STEREO, rate: 44100, channels: 2, seconds: 6, options: ['-c:a', 'alac', '-sample_fmt', 's16p'], extension: 'm4a', codec: 'alac', bitDepth: 16, lossless: true },
];

describe.skipIf(!hasFfmpeg)('analyzeAudio against ffmpeg ebur128', () => {
  for (const fixture of fixtures) {
    it(`${fixture.name}: format exact, loudness within the oracle's tolerances`, async () => {
      const file = path.join(dir, `${fixture.name.replace(/\W+/g, '-')}.${fixture.extension}`);
      const layout = fixture.channels === 1 ? 'mono' : 'stereo';
      generate(`${fixture.source}:sample_rate=${fixture.rate}`, fixture.seconds, ['-ac', String(fixture.channels), '-ar', String(fixture.rate), ...fixture.options, '-channel_layout', layout], file);
      const oracle = ebur128(file);

      const { audio, peaks } = done(await analyzeAudio(file, fixture.extension));

      expect(audio.codec).toBe(fixture.codec);
      expect(audio.sampleRate).toBe(fixture.rate);
      expect(audio.channels).toBe(fixture.channels);
      expect(audio.bitDepth).toBe(fixture.bitDepth);
      if (fixture.lossless) expect(audio.durationMs).toBe(fixture.seconds * 1000);
      else expect(Math.abs(audio.durationMs - fixture.seconds * 1000)).toBeLessThanOrEqual(50);
      const bytes = (await stat(file)).size;
      if (fixture.codec.startsWith('pcm')) expect(audio.bitrate).toBe(fixture.rate * fixture.bitDepth! * fixture.channels);
      else expect(Math.abs(audio.bitrate - (bytes * 8) / fixture.seconds)).toBeLessThan(0.02 * audio.bitrate);

      // ffmpeg prints one decimal: its figure is ±0.05 of the true one.
      expect(Math.abs(audio.loudness.integratedLufs! - oracle.integratedLufs)).toBeLessThanOrEqual(0.1 + 0.05);
      expect(Math.abs(audio.loudness.truePeakDbtp! - oracle.truePeakDbtp)).toBeLessThanOrEqual(0.2 + 0.05);
      expect(Math.abs(audio.loudness.loudnessRangeLu! - oracle.loudnessRangeLu)).toBeLessThanOrEqual(1);

      expect(peaks).toMatchObject({ version: 2, channels: 1, sample_rate: fixture.rate, bits: 8 });
      expect(peaks.length).toBeGreaterThanOrEqual(1000);
      expect(peaks.length).toBeLessThanOrEqual(2000);
      expect(peaks.data).toHaveLength(peaks.length * 2);
      expect(peaks.length * peaks.samples_per_pixel).toBeGreaterThanOrEqual((audio.durationMs / 1000) * fixture.rate - peaks.samples_per_pixel);
    });
  }

  it('analyses RF64 (ffmpeg -rf64 always) and BW64 WAVs as ffprobe reads them', async () => {
    const rf64 = path.join(dir, 'rf64.wav');
    generate(`${PINK}:sample_rate=48000`, 5, ['-ac', '2', '-c:a', 'pcm_s24le', '-rf64', 'always'], rf64);
    const bytes = await readFile(rf64);
    expect(bytes.toString('latin1', 0, 4)).toBe('RF64');
    const bw64 = path.join(dir, 'bw64.wav');
    await writeFile(bw64, Buffer.concat([Buffer.from('BW64', 'latin1'), bytes.subarray(4)]));
    const oracle = ebur128(rf64);
    for (const file of [rf64, bw64]) {
      const probed = ffprobeStream(file);
      const { audio } = done(await analyzeAudio(file, 'wav'));
      expect(audio).toMatchObject({
        codec: 'pcm',
        sampleRate: Number(probed.sample_rate),
        channels: probed.channels,
        bitDepth: probed.bits_per_sample,
        durationMs: Math.round((probed.duration_ts * 1000) / Number(probed.sample_rate)),
      });
      expect(Math.abs(audio.loudness.integratedLufs! - oracle.integratedLufs)).toBeLessThanOrEqual(0.1);
    }
  });

  it('analyses MP3s one after another in one mpg123 instance, each as if it were the first', async () => {
    const pink = path.join(dir, 'reused-pink.mp3');
    const sine = path.join(dir, 'reused-sine.mp3');
    generate(`${PINK}:sample_rate=44100`, 3, ['-ac', '2', '-c:a', 'libmp3lame', '-b:a', '320k'], pink);
    generate(`${SINE_STEREO}:sample_rate=48000`, 2, ['-ac', '2', '-c:a', 'libmp3lame', '-b:a', '128k'], sine);
    const first = done(await analyzeAudio(pink, 'mp3'));
    const instantiations = vi.spyOn(WebAssembly, 'instantiate');
    try {
      const other = done(await analyzeAudio(sine, 'mp3'));
      const again = done(await analyzeAudio(pink, 'mp3'));
      expect(instantiations).not.toHaveBeenCalled();
      expect(other.audio).toMatchObject({ sampleRate: 48000, channels: 2 });
      expect(Math.abs(other.audio.durationMs - 2000)).toBeLessThanOrEqual(50);
      expect(Math.abs(other.audio.loudness.integratedLufs! - ebur128(sine).integratedLufs)).toBeLessThanOrEqual(0.15);
      expect(again).toEqual(first);
    } finally {
      instantiations.mockRestore();
    }
  });

  it('measures the loudness steps: a range near 20 LU, as ffmpeg does', async () => {
    const file = path.join(dir, 'steps.wav');
    generate(`${STEPS}:sample_rate=48000`, 40, ['-c:a', 'pcm_s24le'], file);
    const { audio } = done(await analyzeAudio(file, 'wav'));
    expect(audio.loudness.loudnessRangeLu).toBeGreaterThan(18);
    expect(audio.loudness.loudnessRangeLu).toBeLessThan(21);
  });

  it('finds the inter-sample peak of a clipping square wave above 0 dBTP', async () => {
    const file = path.join(dir, 'square.wav');
    generate(`${SQUARE}:sample_rate=44100`, 3, ['-c:a', 'pcm_s16le'], file);
    const { audio } = done(await analyzeAudio(file, 'wav'));
    expect(audio.loudness.truePeakDbtp).toBeGreaterThan(0);
  });

  it('gives silence no loudness (every block is below the absolute gate) and a flat waveform', async () => {
    const file = path.join(dir, 'silence.wav');
    generate('anullsrc=r=48000:cl=stereo', 4, ['-c:a', 'pcm_s16le'], file);
    const { audio, peaks } = done(await analyzeAudio(file, 'wav'));
    expect(audio.durationMs).toBe(4000);
    expect(audio.loudness).toEqual({ integratedLufs: null, loudnessRangeLu: null, truePeakDbtp: null });
    expect(new Set(peaks.data)).toEqual(new Set([0]));
  });

  it('reads a stream as well as a path', async () => {
    const file = path.join(dir, 'stream.flac');
    generate(`${PINK}:sample_rate=48000`, 3, ['-c:a', 'flac'], file);
    const fromPath = done(await analyzeAudio(file, 'flac'));
    const fromStream = done(await analyzeAudio(createReadStream(file, { highWaterMark: 1000 }), 'flac'));
    expect(fromStream).toEqual(fromPath);
  });

  it('tells Opus from Vorbis in an .ogg stream that arrives a few bytes at a time', async () => {
    const file = path.join(dir, 'trickle.ogg');
    generate(`${PINK}:sample_rate=48000`, 2, ['-c:a', 'libopus'], file);
    const result = done(await analyzeAudio(createReadStream(file, { highWaterMark: 10 }), 'ogg'));
    expect(result.audio.codec).toBe('opus');
  });

  it('reads an M4A with its index at the end (ffmpeg\'s default) as one with the index first', async () => {
    const indexLast = path.join(dir, 'index-last.m4a');
    const indexFirst = path.join(dir, 'index-first.m4a');
    generate(`${PINK}:sample_rate=44100`, 8, ['-c:a', 'aac', '-b:a', '192k'], indexLast);
    generate(`${PINK}:sample_rate=44100`, 8, ['-c:a', 'aac', '-b:a', '192k', '-movflags', '+faststart'], indexFirst);
    const last = await readFile(indexLast);
    expect(last.indexOf('moov')).toBeGreaterThan(last.indexOf('mdat'));
    const first = done(await analyzeAudio(indexFirst, 'm4a'));
    expect(done(await analyzeAudio(indexLast, 'm4a'))).toEqual(first);
    expect(first.audio.durationMs).toBe(8000);
  });

  it('keeps 1000-2000 waveform points for a 0.1 s file and for a 10 minute one', async () => {
    const short = path.join(dir, 'short.wav');
    generate(`${PINK}:sample_rate=44100`, 0.1, ['-c:a', 'pcm_s16le'], short);
    const long = path.join(dir, 'long.flac');
    generate(`${PINK}:sample_rate=8000`, 600, ['-c:a', 'flac'], long);
    for (const [file, extension] of [[short, 'wav'], [long, 'flac']] as const) {
      const { peaks } = done(await analyzeAudio(file, extension));
      expect(peaks.length).toBeGreaterThanOrEqual(1000);
      expect(peaks.length).toBeLessThanOrEqual(2000);
    }
  });
});

describe.skipIf(!hasFfmpeg)('analyzeAudio on broken files', () => {
  it('fails a truncated FLAC with the reason', async () => {
    const file = path.join(dir, 'truncated.flac');
    generate(`${PINK}:sample_rate=48000`, 5, ['-c:a', 'flac'], file);
    await truncate(file, Math.floor((await stat(file)).size * 0.6));
    const result = await analyzeAudio(file, 'flac');
    expect(result).toMatchObject({ status: 'failed', reason: expect.stringMatching(/truncated FLAC/) });
  });

  it('fails a WAV whose header announces more audio than the file holds', async () => {
    const file = path.join(dir, 'lying-size.wav');
    generate(`${PINK}:sample_rate=48000`, 2, ['-c:a', 'pcm_s16le'], file);
    await truncate(file, 100_000);
    expect(await analyzeAudio(file, 'wav')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/truncated WAV/) });
  });

  it('fails a WAV whose header lies about its format', async () => {
    const file = path.join(dir, 'lying-format.wav');
    generate(`${PINK}:sample_rate=48000`, 2, ['-c:a', 'pcm_s16le'], file);
    const bytes = await readFile(file);
    bytes.writeUInt16LE(13, 34); // bits per sample
    await writeFile(file, bytes);
    expect(await analyzeAudio(file, 'wav')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/bit depth 13/) });
  });

  it('fails bytes that are not the audio their extension says', async () => {
    const file = path.join(dir, 'noise.mp3');
    await writeFile(file, Buffer.alloc(300_000, 0x5a));
    for (const extension of ['wav', 'flac', 'mp3', 'ogg', 'opus', 'aac', 'm4a']) {
      expect((await analyzeAudio(file, extension)).status).toBe('failed');
    }
  });

  it('rejects, instead of failing the analysis, when the file cannot be read at all', async () => {
    await expect(analyzeAudio(path.join(dir, 'missing.wav'), 'wav')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('fails a FLAC that decodes to more samples than its STREAMINFO announces, at the first slice past it', async () => {
    // 35 KB that decode to 4.4 GB of samples when the announced second is not held against it.
    const file = path.join(dir, 'bomb.flac');
    await writeFile(file, flacBomb(1000, 48_000));
    expect(await analyzeAudio(file, 'flac')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/more than the 48000 samples STREAMINFO announces/) });
  });

  it('fails a FLAC of unknown length that decodes to more samples per byte than any real codec, within its first slices', async () => {
    // 35 KB of constant frames, STREAMINFO's total unknown: 15,000 samples a byte, hours of work for the time budget alone.
    const file = path.join(dir, 'unknown-length-bomb.flac');
    await writeFile(file, flacBomb(1000, 0));
    const started = performance.now();
    expect(await analyzeAudio(file, 'flac')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/more than 4096 samples per byte/) });
    // Without the rule it decodes for hours; with it, well under a second on an idle machine. The bound leaves
    // a loaded CI machine room (2 s failed under load) and still fails at once without the rule.
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it.each([
    ['a FLAC of digital silence', 'silence.flac', ['-c:a', 'flac', '-ac', '2']],
    ['an Opus of digital silence at 6 kbit/s', 'silence.opus', ['-c:a', 'libopus', '-b:a', '6k', '-ac', '2']],
    ['an MP3 at 8 kbit/s', 'low.mp3', ['-c:a', 'libmp3lame', '-b:a', '8k', '-ar', '8000', '-ac', '1']],
  ])('analyses %s, the most samples per byte real files hold', async (_label, name, options) => {
    const file = path.join(dir, name);
    generate(name.startsWith('silence') ? 'anullsrc=r=48000:cl=stereo' : 'anoisesrc=color=pink:amplitude=0.2:sample_rate=8000', 30, options, file);
    expect(await analyzeAudio(file, name.split('.').pop()!)).toMatchObject({ status: 'done', audio: { durationMs: expect.any(Number) } });
  });

  it('gives a file a time budget proportional to its size, from a 60 s floor to ANALYSIS_TIMEOUT_SECONDS', () => {
    const MiB = 1024 * 1024;
    expect(analysisBudgetSeconds(900 * 1024, 600)).toBe(60);
    expect(analysisBudgetSeconds(100 * MiB, 600)).toBe(200);
    expect(analysisBudgetSeconds(2048 * MiB, 600)).toBe(600);
    expect(analysisBudgetSeconds(100 * MiB, 5)).toBe(5);
  });

  it('fails a FLAC whose STREAMINFO announces more than the longest duration analysed, without decoding it', async () => {
    const file = path.join(dir, 'endless.flac');
    await writeFile(file, flacBomb(2, 48_000 * 3600 * 11));
    expect(await analyzeAudio(file, 'flac')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/longer than 10 hours/) });
  });

  it('fails an M4A of more top-level boxes than any real one holds, without walking them all', async () => {
    const file = path.join(dir, 'boxes.m4a');
    await writeFile(file, emptyBoxesM4a(200_000));
    // Each box header is no read of its own: 10,000 of 8 bytes lie in two reads of the store.
    const stored = await localFileSource(file);
    let reads = 0;
    const counted = { size: stored.size, read: (range?: { start: number; end: number }) => ((reads += 1), stored.read(range)) };
    expect(await analyzeAudio(counted, 'm4a')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/more than 10000 top-level boxes/) });
    expect(reads).toBeLessThanOrEqual(2);
  });

  it('answers unsupported for a file that is not audio', async () => {
    expect(await analyzeAudio(path.join(dir, 'whatever.png'), 'png')).toEqual({ status: 'unsupported' });
  });
});
