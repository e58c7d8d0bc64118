// The bulk-download engine of `band file download --cut`: every file of a cut into a folder, several at a
// time, with progress, skipping files whose local copy already has the same sha256. The twin of bulk-upload.
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FileRecord } from '@bandcollab/sdk';
import type { DownloadReport } from './bulk-reports.js';
import type { Context } from './context.js';
import { toCliError } from './errors.js';
import { usageError } from './exit-codes.js';
import { sha256OfFile } from './file-hash.js';
import { runJobs } from './jobs.js';

export interface DownloadOptions {
  jobs: number;
  skipExisting: boolean;
  /** Replace a local file of the same name; without it such a file fails (as a single download refuses). */
  force: boolean;
}

/**
 * Saves `files` into `dir` under their display names (repeats numbered: `take.wav`, `take (2).wav`, as the
 * cut's ZIP names them), `jobs` at a time. Each file is written beside its target and renamed into place
 * once complete and checked, so a failed download never leaves a partial file or spoils one already there.
 */
export async function downloadFiles(ctx: Context, files: readonly FileRecord[], dir: string, options: DownloadOptions): Promise<DownloadReport> {
  await mkdir(dir, { recursive: true });
  const names = localNames(files);
  const totalBytes = files.reduce((sum, file) => sum + file.size, 0);
  const progress = await ctx.out.transfers('downloading', files.length, totalBytes);
  const done: boolean[] = new Array(files.length).fill(false);
  const report: DownloadReport = { dir, records: [], failures: [], skipped: 0, downloadedBytes: 0, seconds: 0 };
  const started = ctx.io.now();

  const downloadOne = async (file: FileRecord, name: string): Promise<void> => {
    const target = path.join(dir, name);
    if (options.skipExisting && existsSync(target) && (await sha256OfFile(target)) === file.sha256) {
      report.skipped += 1;
      progress.skip(name, file.size);
      return;
    }
    if (!options.force && existsSync(target)) throw usageError(`${name} already exists in ${dir}; add --force to overwrite, or --skip-existing`);
    const partial = path.join(dir, `.${name}.part`);
    const bar = progress.start(name, file.size);
    try {
      const client = await ctx.signedIn();
      // The SDK checks the bytes against the sha256 the server sends before this resolves.
      await client.files.download(file.id, { to: partial, onProgress: ({ loaded }) => bar.update(loaded) });
      await rename(partial, target);
      report.downloadedBytes += file.size;
      bar.finish(true);
    } catch (error) {
      bar.finish(false);
      await rm(partial, { force: true });
      throw error;
    }
  };
  try {
    const errors = await runJobs(files, options.jobs, async (file, index) => {
      await downloadOne(file, names[index]!);
      done[index] = true;
    });
    for (const [index, error] of errors.entries()) if (error !== undefined) report.failures.push({ file: files[index]!, error: toCliError(error) });
  } finally {
    progress.stop();
  }
  report.records = files.filter((_file, index) => done[index]);
  report.seconds = (ctx.io.now() - started) / 1000;
  return report;
}

/** The display name as a file name here: no path separators, and the stored extension unless it already ends with it. */
export function localName(file: FileRecord): string {
  const name = file.name.replace(/[/\\]/g, '_');
  const extension = path.extname(file.url);
  return name.toLowerCase().endsWith(extension.toLowerCase()) ? name : `${name}${extension}`;
}

/** Local names for a cut's files, repeats numbered before the extension (compared ignoring case, as macOS and Windows do). */
function localNames(files: readonly FileRecord[]): string[] {
  const taken = new Set<string>();
  return files.map((file) => {
    const name = localName(file);
    const extension = path.extname(name);
    const stem = name.slice(0, name.length - extension.length);
    let candidate = name;
    for (let n = 2; taken.has(candidate.toLowerCase()); n += 1) candidate = `${stem} (${n})${extension}`;
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}
