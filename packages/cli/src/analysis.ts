// What band does with the server's audio analysis: waiting for it, and the checks that exit 7 when the
// audio is off (band cut check, band publish --max-true-peak / --loudness).
import type { BandClient, FileRecord, StemAudio } from '@bandcollab/sdk';
import { CliError, EXIT } from './exit-codes.js';
import { type CheckedAudio, formatRate, mismatchView } from './views/files.js';

/** The server analyses a 100 MiB file in seconds; a queue this far behind is a server to look at. */
const ANALYSIS_WAIT_MS = 10 * 60_000;
/** Stems whose lengths differ by more than this do not line up (the server's own tolerance). */
const LENGTH_TOLERANCE_MS = 10;

/** The file once analysed (at once when it already is). */
export async function analysedFile(client: BandClient, file: FileRecord): Promise<FileRecord> {
  if (file.analysis !== 'pending') return file;
  try {
    return await client.files.waitForAnalysis(file.id, { signal: AbortSignal.timeout(ANALYSIS_WAIT_MS) });
  } catch (error) {
    // The SDK rejects an aborted call with a BandAbortError (named AbortError) whose cause is the signal's reason;
    // matched by name, so that `band cut --help` does not load the SDK for this module.
    const cause = error instanceof Error && error.name === 'AbortError' ? error.cause : undefined;
    if (cause instanceof DOMException && cause.name === 'TimeoutError') {
      throw new CliError(`${file.name} was not analysed within ${ANALYSIS_WAIT_MS / 60_000} minutes; is the server's analysis queue running?`);
    }
    throw error;
  }
}

export interface CutCheck {
  audio: CheckedAudio[];
  /** Empty when everything lines up. */
  problems: string[];
}

/**
 * Every CUT file and every audio entry of the cut's STEM ZIPs, side by side; all of them (the loose audio
 * files and the entries of all the ZIPs together) must share one sample rate, one bit depth and one length,
 * and every file must be analysable.
 */
export function checkCut(files: readonly FileRecord[]): CutCheck {
  const audio: CheckedAudio[] = [];
  const stems: { name: string; audio: StemAudio }[] = [];
  const problems: string[] = [];
  for (const file of files) {
    if (file.type === 'IMAGE') continue;
    if (file.analysis === 'failed') {
      audio.push({ name: file.name, audio: null });
      problems.push(`${file.name} could not be analysed`);
      continue;
    }
    if (file.audio) {
      // Loose stems (one file each, as a DAW bounces them) must line up as those of a ZIP do.
      audio.push({ name: file.name, audio: file.audio });
      stems.push({ name: file.name, audio: file.audio });
    }
    if (!file.stems) continue;
    for (const entry of file.stems.entries) {
      if (!entry.audio) continue;
      audio.push({ name: `${file.name} › ${entry.path}`, audio: entry.audio });
      stems.push({ name: entry.path, audio: entry.audio });
    }
    const { summary } = file.stems;
    const uniform = summary.sampleRates.length <= 1 && summary.bitDepths.length <= 1 && (summary.longestMs ?? 0) - (summary.shortestMs ?? 0) <= LENGTH_TOLERANCE_MS;
    if (!summary.consistent && uniform) problems.push(`${file.name}: ${summary.audioCount === 0 ? 'no audio entry' : 'an audio entry could not be read'}`);
  }
  const rates = groupBy(stems, (stem) => formatRate(stem.audio.sampleRate));
  if (rates.size > 1) problems.push(mismatchView('sample rates', rates));
  const depths = groupBy(stems, (stem) => (stem.audio.bitDepth ? `${stem.audio.bitDepth}-bit` : 'lossy'));
  if (depths.size > 1) problems.push(mismatchView('bit depths', depths));
  if (stems.length > 1) {
    const lengths = stems.map((stem) => stem.audio.durationMs);
    const spread = Math.max(...lengths) - Math.min(...lengths);
    if (spread > LENGTH_TOLERANCE_MS) {
      const longest = stems.find((stem) => stem.audio.durationMs === Math.max(...lengths))!;
      const shortest = stems.find((stem) => stem.audio.durationMs === Math.min(...lengths))!;
      problems.push(`lengths differ by ${spread} ms (${shortest.name} is the shortest, ${longest.name} the longest)`);
    }
  }
  return { audio, problems };
}

/** The names of the items, by `key`, in the order first seen. */
function groupBy<T extends { name: string }>(items: readonly T[], key: (item: T) => string): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item.name]);
  return groups;
}

/** The limits of `band publish`: a true peak ceiling (dBTP) and an integrated loudness target ± tolerance (LUFS). */
export interface MasteringLimits {
  maxTruePeak?: number;
  loudness?: { target: number; tolerance: number };
}

/** What keeps an analysed file from sharing under `limits`; empty when it is within them. */
export function masteringProblems(file: FileRecord, limits: MasteringLimits): string[] {
  if (!file.audio) return [`${file.name} could not be analysed, so its loudness is unknown`];
  const { integratedLufs, truePeakDbtp } = file.audio.loudness;
  const problems: string[] = [];
  if (limits.maxTruePeak !== undefined && truePeakDbtp !== null && truePeakDbtp > limits.maxTruePeak) {
    problems.push(`true peak ${truePeakDbtp.toFixed(1)} dBTP is above ${limits.maxTruePeak.toFixed(1)} dBTP`);
  }
  if (limits.loudness) {
    const { target, tolerance } = limits.loudness;
    if (integratedLufs === null) problems.push(`the mix is silent (no integrated loudness), not ${target.toFixed(1)} LUFS`);
    else if (Math.abs(integratedLufs - target) > tolerance) {
      problems.push(`integrated loudness ${integratedLufs.toFixed(1)} LUFS is outside ${target.toFixed(1)} ± ${tolerance.toFixed(1)} LUFS`);
    }
  }
  return problems;
}

export function checkFailed(message: string): CliError {
  return new CliError(message, EXIT.checkFailed);
}
