// `band pull`: the cut's changes into the folder. Each download goes to a temporary file under `.band/tmp/`
// (checked against its sha256 by the SDK) and is renamed into place, so a killed pull leaves no partial file
// in the folder. Nothing local is lost: conflicts get a copy beside them, deletions and --force go to
// `.band/trash/`.
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BandClient } from '@bandcollab/sdk';
import type { Context } from '../context.js';
import { toCliError } from '../errors.js';
import { runJobs } from '../jobs.js';
import { readFolder, type SessionOptions } from './folder.js';
import { type Manifest, type ManifestEntry, STATE_DIR, writeManifest } from './manifest.js';
import { planPull, type PullAction, type RemoteFile } from './plan.js';
import type { SessionReport } from './report.js';

type Transfer = Extract<PullAction, { action: 'download' | 'conflict' }>;

export async function pullFolder(ctx: Context, client: BandClient, cutId: string, dir: string, options: SessionOptions): Promise<SessionReport> {
  if (!options.dryRun) await mkdir(dir, { recursive: true });
  const state = await readFolder(client, ctx.apiUrl, cutId, dir, options);
  try {
    const actions = planPull(state.local, state.manifest, state.remote, options);
    const report: SessionReport = { actions, failures: [], symlinks: state.symlinks, hashed: state.hashed, bytes: 0 };
    if (options.dryRun) return report;

    const temporary = path.join(dir, STATE_DIR, 'tmp');
    // What a killed pull left behind; the lock says no other run is using it.
    await rm(temporary, { recursive: true, force: true });
    await mkdir(temporary, { recursive: true });
    const trash = path.join(dir, STATE_DIR, 'trash', new Date(ctx.io.now()).toISOString().replace(/[:.]/g, '-'));
    const toTrash = async (relative: string) => {
      await mkdir(path.dirname(path.join(trash, relative)), { recursive: true });
      await rename(path.join(dir, relative), path.join(trash, relative));
    };

    const files: Manifest['files'] = {};
    for (const action of actions) {
      if (action.action === 'skip' && action.record) files[action.path] = action.record;
      else if (action.action === 'skip' && action.before) files[action.path] = action.before;
    }
    const transfers = actions.filter((action): action is Transfer => action.action === 'download' || action.action === 'conflict');
    const downloads = transfers.filter((action) => !(action.action === 'download' && action.moveFrom !== undefined));
    const progress = await ctx.out.transfers('pulling', downloads.length, downloads.reduce((sum, action) => sum + action.remote.size, 0));

    /** Downloads `remote` to a temporary file, then renames it to `relative`. */
    const fetchTo = async (remote: RemoteFile, relative: string, before?: () => Promise<void>) => {
      const partial = path.join(temporary, randomBytes(8).toString('hex'));
      const bar = progress.start(relative, remote.size);
      try {
        // The SDK checks the bytes against the sha256 the server announces before this resolves.
        await client.files.download(remote.fileId, { to: partial, onProgress: ({ loaded }) => bar.update(loaded) });
        await before?.();
        await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
        await rename(partial, path.join(dir, relative));
        report.bytes += remote.size;
        bar.finish(true);
      } catch (error) {
        bar.finish(false);
        await rm(partial, { force: true });
        throw error;
      }
    };
    const entryOf = async (remote: RemoteFile, relative: string): Promise<ManifestEntry> => {
      const stats = await stat(path.join(dir, relative));
      return { series: remote.series, version: remote.version, sha256: remote.sha256, size: stats.size, mtimeMs: stats.mtimeMs };
    };

    try {
      const errors = await runJobs(transfers, options.jobs, async (action) => {
        if (action.action === 'conflict') {
          await fetchTo(action.remote, action.copyPath);
          // The remote version counts as seen; the local file differs from it, so the next push uploads it as the
          // next version (no size or mtime can match -1: it is hashed again).
          files[action.path] = { series: action.remote.series, version: action.remote.version, sha256: action.remote.sha256, size: action.remote.size, mtimeMs: -1 };
        } else if (action.moveFrom !== undefined) {
          await mkdir(path.dirname(path.join(dir, action.path)), { recursive: true });
          await rename(path.join(dir, action.moveFrom), path.join(dir, action.path));
          files[action.path] = await entryOf(action.remote, action.path);
        } else {
          await fetchTo(action.remote, action.path, action.trashFirst ? () => toTrash(action.path) : undefined);
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
    await rm(temporary, { recursive: true, force: true });
    await writeManifest(dir, { server: ctx.apiUrl, cutId, files });
    return report;
  } finally {
    await state.lock?.release();
  }
}
