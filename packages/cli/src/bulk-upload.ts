// The bulk-upload engine of `band file upload` and `band publish`: several files at a time, with progress,
// skipping those whose content is already on the cut (unless a duplicate is wanted).
import path from 'node:path';
import type { CutWithFiles, FileRecord } from '@bandcollab/sdk';
import type { UploadReport } from './bulk-reports.js';
import type { Context } from './context.js';
import { toCliError } from './errors.js';
import { sha256OfFile } from './file-hash.js';
import { runJobs } from './jobs.js';
import { UPLOAD_RESUME_HINT, withInterruptHint } from './interrupt.js';
import type { LocalFile } from './globs.js';
import { formatBytes } from './render.js';
import { alreadyOnCutView, unchangedView } from './views/files.js';

export interface UploadOptions {
  jobs: number;
  /** Upload a file whose content is already on the cut anyway (else it is skipped, and said so). */
  duplicate: boolean;
  name?: string;
  /** Continue an upload an earlier run left unfinished (large files go through resumable uploads). */
  resume: boolean;
  /** One file only: the id of a file of the series it becomes the next version of. */
  versionOf?: string;
  /** With `versionOf`: nothing is sent when the latest version has the same content (the server says so first). */
  ifChanged?: boolean;
}

/**
 * Uploads `files` to `cut`, `jobs` at a time, with progress. A file whose sha256 is already on the cut is not
 * sent again (unless `duplicate`): the record on the cut stands for it. Those are found before the transfer
 * starts, so its progress counts only the files and bytes it sends.
 */
export async function uploadFiles(ctx: Context, cut: CutWithFiles, files: LocalFile[], options: UploadOptions): Promise<UploadReport> {
  const results: (FileRecord | undefined)[] = new Array(files.length);
  const report: UploadReport = { records: [], failures: [], skipped: 0, uploadedBytes: 0, seconds: 0 };
  const started = ctx.io.now();
  const failed = (errors: unknown[], fileAt: (index: number) => LocalFile) => {
    for (const [index, error] of errors.entries()) if (error !== undefined) report.failures.push({ file: fileAt(index), error: toCliError(error) });
  };

  const bySha = new Map(cut.files.map((record) => [record.sha256, record]));
  const toSend = new Set(files.keys());
  if (!options.duplicate && bySha.size > 0) {
    const errors = await runJobs(files, options.jobs, async (file, index) => {
      const present = bySha.get(await sha256OfFile(file.path));
      if (!present) return;
      toSend.delete(index);
      results[index] = present;
      report.skipped += 1;
      ctx.out.info(alreadyOnCutView(path.basename(file.path), cut));
    });
    for (const [index, error] of errors.entries()) if (error !== undefined) toSend.delete(index);
    failed(errors, (index) => files[index]!);
  }
  const sending = [...toSend].map((index) => ({ file: files[index]!, index }));
  const progress = await ctx.out.transfers('uploading', sending.length, sending.reduce((sum, { file }) => sum + file.size, 0));

  const uploadOne = async (file: LocalFile): Promise<FileRecord> => {
    const label = path.basename(file.path);
    const bar = progress.start(label, file.size);
    let resumedAt = 0;
    try {
      // Large files go through resumable uploads: a broken connection or an expired access token costs a HEAD
      // and the rest; an interrupted run (Ctrl-C, a killed process) is continued by the next one.
      const client = await ctx.signedIn();
      const record = await client.files.upload({
        cutId: cut.id,
        versionOf: options.versionOf,
        ifChanged: options.ifChanged,
        file: file.path,
        name: options.name,
        onProgress: ({ loaded }) => bar.update(loaded),
        resumeStore: options.resume ? ctx.resumeStore() : undefined,
        onResume: (offset) => {
          resumedAt = offset;
          progress.note(`resuming ${label} at ${formatBytes(offset)}`);
        },
      });
      // What this run sent: a resumed upload's first part went with an earlier run.
      report.uploadedBytes += file.size - resumedAt;
      bar.finish(true);
      return record;
    } catch (error) {
      const { isUnchanged } = await import('@bandcollab/sdk');
      if (isUnchanged(error)) {
        // The latest version already has these bytes: no byte was sent, and that version stands for the file.
        bar.finish(true);
        report.skipped += 1;
        progress.note(unchangedView(label));
        return (await ctx.signedIn()).files.get(String(error.problem.fileId));
      }
      bar.finish(false);
      throw error;
    }
  };
  try {
    const errors = await withInterruptHint(UPLOAD_RESUME_HINT, () =>
      runJobs(sending, options.jobs, async ({ file, index }) => {
        results[index] = await uploadOne(file);
      }),
    );
    failed(errors, (position) => sending[position]!.file);
  } finally {
    progress.stop();
  }
  report.records = results.filter((record): record is FileRecord => record !== undefined);
  report.seconds = (ctx.io.now() - started) / 1000;
  return report;
}
