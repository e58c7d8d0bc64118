// The commands over the server's audio analysis: band file info / list, band cut check (exit 7) and the
// mastering gate of band publish (exit 7, the file stays uploaded and unshared).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ebur128, generate, hasFfmpeg } from '../../server/test/analysis/ffmpeg.js';
import { writeZip } from '../../server/test/analysis/zip.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { type CliUser, cliUser, type RunResult, registerWithCli } from './support/cli.js';

vi.setConfig({ testTimeout: 90_000 });

const PINK = 'anoisesrc=color=pink:amplitude=0.2';
const WAV24 = ['-c:a', 'pcm_s24le', '-ac', '2'];

let server: TestServer;
let ana: CliUser;
let work: string;

beforeAll(async () => {
  if (!hasFfmpeg) return;
  server = await startTestServer();
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com', 'correct horse battery', 'Ana');
  work = await mkdtemp(path.join(os.tmpdir(), 'band-analysis-'));
  await ok(['project', 'create', 'Demo']);
  await ok(['vibe', 'create', 'Verse', '--project', 'Demo']);
});
afterAll(async () => {
  await ana?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

async function ok(args: string[]): Promise<RunResult> {
  const result = await ana.band(args);
  if (result.exitCode !== 0) throw new Error(`band ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  return result;
}

function fixture(name: string, seconds: number, options: string[], source = `${PINK}:sample_rate=48000`): string {
  const file = path.join(work, name);
  generate(source, seconds, options, file);
  return file;
}

const where = (cut: string) => ['--cut', cut, '--vibe', 'Verse', '--project', 'Demo'];

describe.skipIf(!hasFfmpeg)('band and the audio analysis', () => {
  it('band cut check exits 7 when one of four stems is 44.1 kHz, naming it, and 0 when they line up', async () => {
    await ok(['cut', 'create', 'Session', '--vibe', 'Verse', '--project', 'Demo']);
    const stems = path.join(work, 'stems.zip');
    await writeZip(stems, {
      'drums.wav': fixture('drums.wav', 3, WAV24),
      'bass.wav': fixture('bass.wav', 3, WAV24),
      'keys.wav': fixture('keys.wav', 3, WAV24),
      'vox.wav': fixture('vox.wav', 3, WAV24, `${PINK}:sample_rate=44100`),
    });
    await ok(['file', 'upload', stems, ...where('Session')]);

    const check = await ana.band(['cut', 'check', 'Session', '--vibe', 'Verse', '--project', 'Demo']);
    expect(check.exitCode).toBe(7);
    expect(check.stderr).toContain('sample rates differ: 48 kHz (drums.wav, bass.wav, keys.wav), 44.1 kHz (vox.wav)');
    expect(check.stdout).toMatch(/FILE +CODEC +RATE +BITS +CH +DURATION/);
    expect(check.stdout).toMatch(/stems\.zip › vox\.wav +pcm +44\.1 kHz +24 +2 +0:03\.0/);

    const json = await ana.band(['cut', 'check', 'Session', '--vibe', 'Verse', '--project', 'Demo', '--json']);
    expect(json.exitCode).toBe(7);
    expect(JSON.parse(json.stdout)).toMatchObject({ consistent: false, problems: [expect.stringContaining('sample rates differ')] });

    await ok(['cut', 'create', 'Clean', '--vibe', 'Verse', '--project', 'Demo']);
    const clean = path.join(work, 'clean.zip');
    await writeZip(clean, { 'drums.wav': path.join(work, 'drums.wav'), 'bass.wav': path.join(work, 'bass.wav') });
    await ok(['file', 'upload', clean, ...where('Clean')]);
    expect((await ok(['cut', 'check', 'Clean', '--vibe', 'Verse', '--project', 'Demo'])).stderr).toContain('everything lines up');

    const info = await ok(['file', 'info', 'stems.zip', ...where('Session')]);
    expect(info.stdout).toMatch(/vox\.wav +\S+ \S+ +PCM, 44\.1 kHz, 24-bit, stereo +0:03\.0/);
    expect(info.stdout).toContain('4 stems of 4 entries do not line up');
  });

  it('band file info shows format, duration, loudness and true peak; band file list a duration column', async () => {
    await ok(['cut', 'create', 'Mix', '--vibe', 'Verse', '--project', 'Demo']);
    const mix = fixture('mix.flac', 6, ['-c:a', 'flac', '-sample_fmt', 's16', '-ac', '2']);
    await ok(['file', 'upload', mix, ...where('Mix')]);
    // A check waits for the analysis.
    await ok(['cut', 'check', 'Mix', '--vibe', 'Verse', '--project', 'Demo']);
    const oracle = ebur128(mix);
    const info = await ok(['file', 'info', 'mix.flac', ...where('Mix')]);
    expect(info.stdout).toMatch(/Format: +FLAC, 48 kHz, 16-bit, stereo, \d+ kbit\/s/);
    expect(info.stdout).toContain('Duration:    0:06.0');
    const loudness = /Loudness: +(-\d+\.\d) LUFS integrated, range \d+\.\d LU/.exec(info.stdout);
    expect(Math.abs(Number(loudness![1]) - oracle.integratedLufs)).toBeLessThanOrEqual(0.15);
    const peak = /True peak: +(-\d+\.\d) dBTP/.exec(info.stdout);
    expect(Math.abs(Number(peak![1]) - oracle.truePeakDbtp)).toBeLessThanOrEqual(0.25);
    expect((await ok(['file', 'list', ...where('Mix')])).stdout).toMatch(/NAME +VERSION +TYPE +SIZE +DURATION[\s\S]*mix\.flac +v1 +audio +\S+ \S+ +0:06\.0/);
  });

  it('band publish with --max-true-peak and --loudness refuses a hot master with exit 7 and its figures; the file stays, unshared', async () => {
    const hot = fixture('hot.wav', 4, ['-c:a', 'pcm_s16le'], 'aevalsrc=0.99*sin(2*PI*997*t):s=48000');
    const links = async () => Number((await server.sql`select count(*)::int as n from share_links`)[0]!.n);
    const before = await links();
    const refused = await ana.band(['publish', hot, '--project', 'Demo', '--vibe', 'Verse', '--cut', 'Masters', '--create', '--share', '--max-true-peak', '-1.0', '--loudness', '-14:1']);
    expect(refused.exitCode).toBe(7);
    expect(refused.stderr).toMatch(/hot\.wav not shared: true peak -?0\.\d dBTP is above -1\.0 dBTP; integrated loudness -\d\.\d LUFS is outside -14\.0 ± 1\.0 LUFS \(the file stays uploaded, id [0-9a-f-]{36}\)/);
    expect(refused.stdout).not.toMatch(/\/share\//);
    expect(await links()).toBe(before);
    expect((await ok(['file', 'list', ...where('Masters')])).stdout).toContain('hot.wav');

    const calm = fixture('calm.wav', 4, ['-c:a', 'pcm_s16le']);
    const oracle = ebur128(calm);
    const accepted = await ok([
      'publish', calm, '--project', 'Demo', '--vibe', 'Verse', '--cut', 'Masters', '--share',
      `--max-true-peak=${(oracle.truePeakDbtp + 0.5).toFixed(1)}`, '--loudness', `${oracle.integratedLufs.toFixed(1)}:0.5`,
    ]);
    expect(accepted.stdout).toMatch(/\/share\/[A-Za-z0-9_-]{43}/);
    expect(await links()).toBe(before + 1);
  });

  it('band publish refuses limits for a file that is not audio, before uploading', async () => {
    const refused = await ana.band(['publish', path.join(work, 'stems.zip'), '--project', 'Demo', '--vibe', 'Verse', '--cut', 'Masters', '--max-true-peak', '-1']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--max-true-peak and --loudness take an audio file');
  });
});
