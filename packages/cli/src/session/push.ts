// `band push`: the folder's changes to the cut, as new versions (changed files), new series (new files, with
// their path) and, with --delete, deleted series. Unchanged files cost no request; a conflict is never
// overwritten. The manifest records what both sides hold afterwards, also when some transfers failed.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { BandClient, FileRecord } from '@bandcollab/sdk';
import type { Context } from '../context.js';
import { toCliError } from '../errors.js';
import { CliError, EXIT } from '../exit-codes.js';
import { UPLOAD_RESUME_HINT, withInterruptHint } from '../interrupt.js';
import { runJobs } from '../jobs.js';
import { formatBytes, formatTime } from '../render.js';
import { readFolder, type SessionOptions } from './folder.js';
import { type Manifest, type ManifestEntry, sameFiles, writeManifest } from './manifest.js';
import { serverPath } from './paths.js';
import { planPush, type PushAction } from './plan.js';
import type { SessionReport } from './report.js';

type Upload = Extract<PushAction, { action: 'upload' }>;
type Delete = Extract<PushAction, { action: 'delete' }>;

export async function pushFolder(ctx: Context, client: BandClient, dir: string, cutId: string, options: SessionOptions): Promise<SessionReport> {
  // A missing folder is an empty source: refused, and not created by the lock.
  if (!(await stat(dir).catch(() => null))?.isDirectory()) throw new CliError(`${dir} is not a folder: nothing pushed, nothing deleted`, EXIT.error);
  const state = await readFolder(client, ctx.apiUrl, cutId, dir, options);
  try {
    const actions = planPush(state.local, state.manifest, state.remote, options);
    const report: SessionReport = { actions, failures: [], symlinks: state.symlinks, hashed: state.hashed, bytes: 0 };
    if (options.dryRun || !state.folder) return report;
    const { folder } = state;

    const files: Manifest['files'] = {};
    const keep = (action: PushAction) => {
      if (action.before) files[action.path] = action.before;
    };
    for (const action of actions) {
      if (action.action === 'skip' && action.record) files[action.path] = action.record;
      else if (action.action === 'skip' || action.action === 'conflict') keep(action);
    }
    const uploads = actions.filter((action): action is Upload => action.action === 'upload');
    const progress = await ctx.out.transfers('pushing', uploads.length, uploads.reduce((sum, action) => sum + action.local.size, 0));
    try {
      const errors = await withInterruptHint(UPLOAD_RESUME_HINT, () =>
        runJobs(uploads, options.jobs, async (action) => {
          const bar = progress.start(action.path, action.local.size);
          try {
            const { entry, sent } = await upload(ctx, client, cutId, dir, action, (loaded) => bar.update(loaded), (offset) => progress.note(`resuming ${action.path} at ${formatBytes(offset)}`));
            files[action.path] = entry;
            report.bytes += sent;
            bar.finish(true);
          } catch (error) {
            bar.finish(false);
            throw error;
          }
        }),
      );
      for (const [index, error] of errors.entries()) {
        const action = uploads[index]!;
        if (error === undefined) continue;
        keep(action);
        // A rename that failed leaves the series where it was.
        if (action.renamedFrom !== undefined && action.before === undefined) {
          const was = state.manifest?.files[action.renamedFrom];
          if (was) files[action.renamedFrom] = was;
        }
        report.failures.push({ path: action.path, error: toCliError(error) });
      }
    } finally {
      progress.stop();
    }
    for (const action of actions.filter((candidate): candidate is Delete => candidate.action === 'delete')) {
      try {
        const deleted = await client.files.deleteSeries(action.remote.fileId);
        // The server keeps it in the cut's trash (§21): the report says so, and how to get it back.
        if (deleted.trashedUntil !== undefined) {
          action.reason = `deleted here: in the trash on the server until ${formatTime(deleted.trashedUntil)} UTC (band trash restore ${deleted.seriesId})`;
        }
      } catch (error) {
        keep(action);
        // Another member's versions stay unless the caller is a project ADMIN (§16): reported, kept.
        const failure = toCliError(error);
        report.failures.push({ path: action.path, error: new CliError(`not deleted on the cut: ${failure.message}`, failure.exitCode, failure.requestId) });
      }
    }
    if (!state.manifest || !sameFiles(state.manifest.files, files)) await writeManifest(folder, { server: ctx.apiUrl, cutId, files });
    return report;
  } finally {
    await state.lock?.release();
  }
}

/** Uploads one file; answers its manifest entry and the bytes sent (none when the server already had them). */
async function upload(
  ctx: Context,
  client: BandClient,
  cutId: string,
  dir: string,
  action: Upload,
  onProgress: (loaded: number) => void,
  onResume: (offset: number) => void,
): Promise<{ entry: ManifestEntry; sent: number }> {
  const { local } = action;
  const entryOf = (record: FileRecord): ManifestEntry => ({ series: record.series.id, version: record.series.version, sha256: record.sha256, size: local.size, mtimeMs: local.mtimeMs });
  try {
    const record = await client.files.upload({
      ...(action.versionOf ? { versionOf: action.versionOf.fileId } : { cutId }),
      // The sha256 this run took to see the change: the SDK need not read the file once more to send it.
      ifChanged: action.ifChanged && local.sha256 !== undefined && { sha256: local.sha256 },
      file: path.join(dir, local.path),
      path: serverPath(local.path),
      onProgress: ({ loaded }) => onProgress(loaded),
      // Large files go through resumable uploads: a push killed mid-file continues where it stopped.
      resumeStore: ctx.resumeStore(),
      onResume,
    });
    return { entry: entryOf(record), sent: local.size };
  } catch (error) {
    const { isUnchanged } = await import('@bandcollab/sdk');
    if (!isUnchanged(error)) throw error;
    // The latest version already holds these bytes: nothing was sent, and that version stands for the file.
    return { entry: entryOf(await client.files.get(String(error.problem.fileId))), sent: 0 };
  }
}
