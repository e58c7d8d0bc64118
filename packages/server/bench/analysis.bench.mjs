// Analysis benchmark of the built engine (dist/analysis; `pnpm build` first, the root `pnpm bench` does):
//  1. a 4-minute 48 kHz 24-bit stereo WAV, the same as FLAC and a 4-minute 320 kbps MP3 (pink noise, made by
//     ffmpeg): the engine's wall and CPU time against ffmpeg's `ebur128=peak=true` pass over the same file in
//     the same run (ffmpeg is the reference: native code, and the loudness oracle the tests use). Target:
//     cpuVsFfmpeg <= 1;
//  2. peak RSS growth of the analysing process (target < 64 MiB), and the same for a 40-minute WAV: memory
//     stays flat with duration because decoding streams.
// Each analysis runs in a fresh process (analysis-worker.mjs) so its memory figure is its own. The median of
// ROUNDS runs is reported. Needs ffmpeg (Debian package).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { report, round } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LONG_MINUTES = Number(process.env.BENCH_LONG_MINUTES ?? 40);
const MiB = 1024 * 1024;
const TARGETS = { cpuVsFfmpeg: 1, rssGrowthMiB: 64, flatMiB: 8 };

if (spawnSync('ffmpeg', ['-version']).status !== 0) {
  console.error('analysis bench SKIPPED: ffmpeg is not installed (apt-get install ffmpeg)');
  process.exit(0);
}

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-analysis-bench-'));
try {
  const wav = fixture('4min-48k-24bit.wav', 240, ['-c:a', 'pcm_s24le']);
  const flac = fixture('4min-48k-24bit.flac', 240, ['-c:a', 'flac', '-sample_fmt', 's32']);
  const mp3 = fixture('4min-320k.mp3', 240, ['-c:a', 'libmp3lame', '-b:a', '320k']);
  const shortRuns = {};
  const formats = [
    ['wav-4min-48k-24bit', wav, 'wav'],
    ['flac-4min-48k-24bit', flac, 'flac'],
    ['mp3-4min-320k', mp3, 'mp3'],
  ];
  for (const [name, file, extension] of formats) {
    const ours = median(Array.from({ length: ROUNDS }, () => analyse(file, extension)));
    const ffmpeg = median(Array.from({ length: ROUNDS }, () => ebur128(file)));
    shortRuns[name] = ours;
    report(`analysis ${name}`, {
      wallMs: round(ours.wallMs),
      cpuMs: round(ours.cpuMs),
      ffmpegWallMs: round(ffmpeg.wallMs),
      ffmpegCpuMs: round(ffmpeg.cpuMs),
      cpuVsFfmpeg: round(ours.cpuMs / ffmpeg.cpuMs),
      targetCpuVsFfmpeg: TARGETS.cpuVsFfmpeg,
      rssGrowthMiB: round(ours.rssGrowthBytes / MiB),
      targetRssGrowthMiB: TARGETS.rssGrowthMiB,
    });
  }
  const long = fixture(`${LONG_MINUTES}min-48k-24bit.wav`, LONG_MINUTES * 60, ['-c:a', 'pcm_s24le']);
  const longRun = analyse(long, 'wav');
  const growth = (longRun.rssGrowthBytes - shortRuns['wav-4min-48k-24bit'].rssGrowthBytes) / MiB;
  report(`analysis wav-${LONG_MINUTES}min-48k-24bit`, {
    wallMs: round(longRun.wallMs),
    cpuMs: round(longRun.cpuMs),
    rssGrowthMiB: round(longRun.rssGrowthBytes / MiB),
    moreThanFourMinutesMiB: round(growth),
    targetMoreThanFourMinutesMiB: TARGETS.flatMiB,
  });
} finally {
  await rm(work, { recursive: true, force: true });
}

function fixture(name, seconds, options) {
  const file = path.join(work, name);
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anoisesrc=color=pink:amplitude=0.3:sample_rate=48000', '-t', String(seconds), '-ac', '2', ...options, file]);
  return file;
}

function analyse(file, extension) {
  const output = execFileSync(process.execPath, ['--expose-gc', path.join(here, 'analysis-worker.mjs'), file, extension], { encoding: 'utf8' });
  return JSON.parse(output);
}

/** ffmpeg's own account of its ebur128 pass (-benchmark: user, system and real time). */
function ebur128(file) {
  const run = spawnSync('ffmpeg', ['-hide_banner', '-nostats', '-benchmark', '-i', file, '-af', 'ebur128=peak=true', '-f', 'null', '-'], { encoding: 'utf8' });
  const match = /bench: utime=([\d.]+)s stime=([\d.]+)s rtime=([\d.]+)s/.exec(run.stderr);
  if (!match) throw new Error(`no -benchmark line from ffmpeg:\n${run.stderr}`);
  return { cpuMs: (Number(match[1]) + Number(match[2])) * 1000, wallMs: Number(match[3]) * 1000 };
}

function median(runs) {
  const middle = (key) => runs.map((run) => run[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  return Object.fromEntries(Object.keys(runs[0]).filter((key) => typeof runs[0][key] === 'number').map((key) => [key, middle(key)]));
}
