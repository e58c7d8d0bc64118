// `band pull`: the cut's changes into the folder. Each download goes to a temporary file under `.band/tmp/`
// (checked against its sha256 by the SDK) and is renamed into place, so a killed pull leaves no partial file
// in the folder. Nothing local is lost: conflicts get a copy beside them, deletions and --force go to
// `.band/trash/`. Every write goes through the folder's SafeFolder: none follows a link out of the folder.
import { randomBytes } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import type { BandClient } from '@bandcollab/sdk';
import type { Context } from '../context.js';
import { toCliError } from '../errors.js';
import { runJobs } from '../jobs.js';
import { readFolder, type SessionOptions } from './folder.js';
import { type Manifest, type ManifestEntry, sameFiles, STATE_DIR, writeManifest } from './manifest.js';
import { planPull, type PullAction, type RemoteFile } from './plan.js';
import type { SessionReport } from './report.js';

type Transfer = Extract<PullAction, { action: 'download' | 'conflict' }>;

export async function pullFolder(ctx: Context, client: BandClient, cutId: string, dir: string, options: SessionOptions): Promise<SessionReport> {
  const state = await readFolder(client, ctx.apiUrl, cutId, dir, { ...options, create: true });
  try {
    const actions = planPull(state.local, state.manifest, state.remote, options, [...state.ignored, ...state.symlinks]);
    const report: SessionReport = { actions, failures: [], symlinks: state.symlinks, hashed: state.hashed, bytes: 0 };
    if (options.dryRun || !state.folder) return report;
    const { folder } = state;

    const temporary = `${STATE_DIR}/tmp`;
    // What a killed pull left behind; the lock says no other run is using it.
    await folder.remove(temporary);
    const trash = `${STATE_DIR}/trash/${new Date(ctx.io.now()).toISOString().replace(/[:.]/g, '-')}`;
    const toTrash = (relative: string) => folder.move(relative, `${trash}/${relative}`, { replace: false });

    const files: Manifest['files'] = {};
    for (const action of actions) {
      if (action.action === 'skip' && action.record) files[action.path] = action.record;
      else if (action.action === 'skip' && action.before) files[action.path] = action.before;
    }
    const transfers = actions.filter((action): action is Transfer => action.action === 'download' || action.action === 'conflict');
    const downloads = transfers.filter((action) => !(action.action === 'download' && action.moveFrom !== undefined));
    const progress = await ctx.out.transfers('pulling', downloads.length, downloads.reduce((sum, action) => sum + action.remote.size, 0));

    /** Downloads `remote` to a new temporary file, then moves it to `relative` (over a file there only with `replace`). */
    const fetchTo = async (remote: RemoteFile, relative: string, replace: boolean, before?: () => Promise<void>) => {
      const partial = `${temporary}/${randomBytes(8).toString('hex')}`;
      const bar = progress.start(relative, remote.size);
      try {
        const file = await folder.create(partial);
        const stream = file.handle.createWriteStream();
        try {
          // The SDK checks the bytes against the sha256 the server announces before this resolves.
          await client.files.download(remote.fileId, { to: stream, onProgress: ({ loaded }) => bar.update(loaded) });
          await finished(stream.end());
        } catch (error) {
          await finished(stream.destroy()).catch(() => undefined);
          throw error;
        }
        await before?.();
        await folder.move(partial, relative, { replace });
        report.bytes += remote.size;
        bar.finish(true);
      } catch (error) {
        bar.finish(false);
        await folder.remove(partial).catch(() => undefined);
        throw error;
      }
    };
    const entryOf = async (remote: RemoteFile, relative: string): Promise<ManifestEntry> => {
      const stats = await lstat(folder.path(relative));
      return { series: remote.series, version: remote.version, sha256: remote.sha256, size: stats.size, mtimeMs: stats.mtimeMs };
    };

    try {
      const errors = await runJobs(transfers, options.jobs, async (action) => {
        if (action.action === 'conflict') {
          await fetchTo(action.remote, action.copyPath, false);
          // The remote version counts as seen; the local file differs from it, so the next push uploads it as the
          // next version (no size or mtime can match -1: it is hashed again).
          files[action.path] = { series: action.remote.series, version: action.remote.version, sha256: action.remote.sha256, size: action.remote.size, mtimeMs: -1 };
        } else if (action.moveFrom !== undefined) {
          await folder.move(action.moveFrom, action.path, { replace: true });
          files[action.path] = await entryOf(action.remote, action.path);
        } else {
          await fetchTo(action.remote, action.path, true, action.trashFirst ? () => toTrash(action.path) : undefined);
          files[action.path] = await entryOf(action.remote, action.path);
        }
      });
      for (const [index, error] of errors.entries()) {
        if (error === undefined) continue;
        const action = transfers[index]!;
        if (action.before) files[action.path] = action.before;
        report.failures.push({ path: action.path, error: toCliError(error) });
      }
    } finally {
      progress.stop();
    }
    for (const action of actions) {
      if (action.action !== 'delete') continue;
      try {
        await toTrash(action.path);
      } catch (error) {
        if (action.before) files[action.path] = action.before;
        report.failures.push({ path: action.path, error: toCliError(error) });
      }
    }
    await folder.remove(temporary);
    if (!state.manifest || !sameFiles(state.manifest.files, files)) await writeManifest(folder, { server: ctx.apiUrl, cutId, files });
    return report;
  } finally {
    await state.lock?.release();
  }
}
