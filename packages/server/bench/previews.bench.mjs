// Preview benchmark of the built encoder (dist/previews; `pnpm build` first, the root `pnpm bench` does):
//  1. a 4-minute 48 kHz 24-bit stereo WAV (pink noise made by ffmpeg): CPU seconds per audio minute of the
//     preview against Debian's ffmpeg encoding the same file to AAC 256k in the same run (native code, the
//     reference). Target: cpuVsFfmpeg <= 2;
//  2. the same at 96 kHz, where the band-limited resampler runs too (ffmpeg resamples with swresample);
//  3. peak RSS growth of the encoding process for the 4-minute 96 kHz file and a long one (BENCH_LONG_MINUTES,
//     default 20; the contract's case is 62): memory stays flat with duration because every stage streams.
// Each preview runs in a fresh process (preview-worker.mjs). The median of ROUNDS runs is reported. Needs ffmpeg.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { report, round } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LONG_MINUTES = Number(process.env.BENCH_LONG_MINUTES ?? 20);
const MiB = 1024 * 1024;
const TARGETS = { cpuVsFfmpeg: 2, flatMiB: 16 };
/** The encoding process's old generation, MiB. */
const HEAP_MB = 48;

if (spawnSync('ffmpeg', ['-version']).status !== 0) {
  console.error('previews bench SKIPPED: ffmpeg is not installed (apt-get install ffmpeg)');
  process.exit(0);
}

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-previews-bench-'));
try {
  const runs = {};
  for (const rate of [48000, 96000]) {
    const wav = fixture(`4min-${rate / 1000}k-24bit.wav`, 240, rate);
    const ours = median(Array.from({ length: ROUNDS }, () => preview(wav)));
    const ffmpeg = median(Array.from({ length: ROUNDS }, () => ffmpegAac(wav)));
    runs[rate] = ours;
    report(`preview wav-4min-${rate / 1000}k-24bit`, {
      wallMs: round(ours.wallMs),
      cpuSecondsPerAudioMinute: round(ours.cpuMs / 1000 / ours.audioMinutes),
      ffmpegCpuSecondsPerAudioMinute: round(ffmpeg.cpuMs / 1000 / 4),
      cpuVsFfmpeg: round(ours.cpuMs / ffmpeg.cpuMs),
      targetCpuVsFfmpeg: TARGETS.cpuVsFfmpeg,
      realtimeFactor: round((ours.audioMinutes * 60_000) / ours.wallMs),
      rssGrowthMiB: round(ours.rssGrowthBytes / MiB),
    });
  }
  const long = fixture(`${LONG_MINUTES}min-96k-24bit.wav`, LONG_MINUTES * 60, 96000);
  const longRun = preview(long);
  report(`preview wav-${LONG_MINUTES}min-96k-24bit`, {
    wallMs: round(longRun.wallMs),
    cpuSecondsPerAudioMinute: round(longRun.cpuMs / 1000 / longRun.audioMinutes),
    rssGrowthMiB: round(longRun.rssGrowthBytes / MiB),
    moreThanFourMinutesMiB: round((longRun.rssGrowthBytes - runs[96000].rssGrowthBytes) / MiB),
    targetMoreThanFourMinutesMiB: TARGETS.flatMiB,
  });
} finally {
  await rm(work, { recursive: true, force: true });
}

function fixture(name, seconds, rate) {
  const file = path.join(work, name);
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `anoisesrc=color=pink:amplitude=0.3:sample_rate=${rate}`, '-t', String(seconds), '-ac', '2', '-c:a', 'pcm_s24le', file]);
  return file;
}

function preview(file) {
  // A small old generation, as a worker thread's limit is (the server's is 256 MiB): without it V8 lets garbage
  // pile up for as long as memory is plentiful, and peak RSS grows with the run's length though nothing is kept.
  const output = execFileSync(process.execPath, ['--expose-gc', `--max-old-space-size=${HEAP_MB}`, path.join(here, 'preview-worker.mjs'), file, 'wav', `${file}.m4a`], { encoding: 'utf8' });
  return JSON.parse(output);
}

/** ffmpeg's own account (-benchmark: user, system and real time) of encoding the file to AAC-LC 256k in MP4. */
function ffmpegAac(file) {
  const run = spawnSync('ffmpeg', ['-hide_banner', '-nostats', '-benchmark', '-y', '-i', file, '-ar', '48000', '-c:a', 'aac', '-b:a', '256k', '-movflags', '+faststart', `${file}.ffmpeg.m4a`], { encoding: 'utf8' });
  const match = /bench: utime=([\d.]+)s stime=([\d.]+)s rtime=([\d.]+)s/.exec(run.stderr);
  if (!match) throw new Error(`no -benchmark line from ffmpeg:\n${run.stderr}`);
  return { cpuMs: (Number(match[1]) + Number(match[2])) * 1000, wallMs: Number(match[3]) * 1000 };
}

function median(runs) {
  const middle = (key) => runs.map((run) => run[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  return Object.fromEntries(Object.keys(runs[0]).filter((key) => typeof runs[0][key] === 'number').map((key) => [key, middle(key)]));
}
