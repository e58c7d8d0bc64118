// ffmpeg (Debian package, tests only) makes the fixtures and is the loudness oracle: its ebur128 filter.
import { execFileSync, spawnSync } from 'node:child_process';
import { requirePrerequisite } from '../support/prerequisites.js';

export const hasFfmpeg = requirePrerequisite('ffmpeg', spawnSync('ffmpeg', ['-version']).status === 0 ? null : 'ffmpeg is not installed (apt-get install ffmpeg)');

/** Runs ffmpeg with a lavfi source expression and output options, writing `output`. */
export function generate(source: string, seconds: number, outputOptions: string[], output: string): void {
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', source, '-t', String(seconds), ...outputOptions, output]);
}

/** What ffprobe, the independent reader, makes of a file's first audio stream. */
export interface ProbedStream {
  codec_name: string;
  sample_rate: string;
  channels: number;
  bits_per_sample: number;
  duration_ts: number;
}

export function ffprobeStream(file: string): ProbedStream {
  const probed = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', file], { encoding: 'utf8' })) as { streams: ProbedStream[] };
  return probed.streams[0]!;
}

export interface Ebur128Summary {
  integratedLufs: number;
  loudnessRangeLu: number;
  truePeakDbtp: number;
}

/** ffmpeg's `ebur128=peak=true` summary for a file. */
export function ebur128(file: string): Ebur128Summary {
  const run = spawnSync('ffmpeg', ['-nostats', '-hide_banner', '-i', file, '-af', 'ebur128=peak=true', '-f', 'null', '-'], { encoding: 'utf8' });
  const summary = run.stderr.slice(run.stderr.lastIndexOf('Summary:'));
  const figure = (pattern: RegExp): number => {
    const match = pattern.exec(summary);
    if (!match) throw new Error(`no ${pattern} in ffmpeg's summary:\n${summary}`);
    return Number(match[1]);
  };
  return {
    integratedLufs: figure(/I:\s+(-?[\d.]+|-inf) LUFS/),
    loudnessRangeLu: figure(/LRA:\s+(-?[\d.]+) LU/),
    truePeakDbtp: figure(/Peak:\s+(-?[\d.]+|-inf) dBFS/),
  };
}
