// What a push or a pull will do, decided from three states of each path (§16): the local file now, the remote
// latest version now, and both as the last run left them (the manifest). Pure: no I/O, so every rule is tested
// on its own. A path changed on both sides is a conflict and is never overwritten.
import { checkFilePath } from '@bandcollab/sdk';
import { CliError, EXIT } from '../exit-codes.js';
import type { LocalFile } from './changes.js';
import type { Manifest, ManifestEntry } from './manifest.js';
import { conflictCopyPath, pathKey, serverPath } from './paths.js';

export type ActionKind = 'upload' | 'download' | 'delete' | 'conflict' | 'skip';

/** A cut's file as push and pull see it: the latest version of a series, at its path. */
export interface RemoteFile {
  path: string;
  /** The latest version's file id. */
  fileId: string;
  series: string;
  version: number;
  sha256: string;
  size: number;
}

interface Base {
  /** The path in the folder the action is about. */
  path: string;
  reason: string;
  /** What the manifest keeps at `path` when the action does nothing or fails (absent: nothing). */
  before?: ManifestEntry;
  /** Needs the user's attention: the run exits 3 (conflicts, twins). */
  attention?: boolean;
  /** A deletion on one side this run does not carry over (no `--delete`, or the other command's): always shown, never "Up to date". */
  deletionKept?: boolean;
}

export type PushAction =
  | (Base & { action: 'upload'; local: LocalFile; versionOf?: RemoteFile; ifChanged: boolean; renamedFrom?: string })
  | (Base & { action: 'delete'; remote: RemoteFile })
  | (Base & { action: 'conflict' | 'skip'; record?: ManifestEntry });

export type PullAction =
  | (Base & { action: 'download'; remote: RemoteFile; moveFrom?: string; trashFirst?: boolean })
  | (Base & { action: 'conflict'; remote: RemoteFile; copyPath: string })
  | (Base & { action: 'delete'; local: LocalFile })
  | (Base & { action: 'skip'; record?: ManifestEntry });

export interface PlanOptions {
  force: boolean;
  delete: boolean;
  /** At most this many deletions; undefined: 25 % of the manifest's files (rounded down, at least 1). */
  maxDelete?: number;
}

/** `--max-delete`'s default: 25 % of the files the last run left, rounded down, at least 1. */
export function defaultMaxDelete(manifestFiles: number): number {
  return Math.max(1, Math.floor(manifestFiles / 4));
}

/**
 * The files whose path the contract's rules allow (§16: a relative path, none of the reserved ones such as
 * `.git/config`), at the path as the server keeps it (NFC) for remote files; the others become a skip that
 * needs the user's attention, named by `refusal`. Push applies it to the folder, pull to whatever a server lists
 * (a compromised one may list `../x` or `.git/config`): neither ever sends or writes a refused path.
 */
function allowedPaths<T extends { path: string }>(files: readonly T[], refusal: string): { allowed: T[]; refused: Base[] } {
  const allowed: T[] = [];
  const refused: Base[] = [];
  for (const file of files) {
    const checked = checkFilePath(file.path);
    if ('problem' in checked) refused.push({ path: file.path, reason: `${refusal}: a path ${checked.problem}`, attention: true });
    else allowed.push(file);
  }
  return { allowed, refused };
}

interface Sides {
  local: Map<string, LocalFile>;
  base: Map<string, { path: string; entry: ManifestEntry }>;
  remote: Map<string, RemoteFile>;
  /** Keys held by several local paths (case or normalisation twins): skipped and reported. */
  twins: PushAction[];
  keys: string[];
}

function sides(localFiles: readonly LocalFile[], manifest: Manifest | null, remoteFiles: readonly RemoteFile[]): Sides {
  const byKey = new Map<string, LocalFile[]>();
  for (const file of localFiles) byKey.set(pathKey(file.path), [...(byKey.get(pathKey(file.path)) ?? []), file]);
  const local = new Map<string, LocalFile>();
  const twins: PushAction[] = [];
  for (const [key, files] of byKey) {
    if (files.length === 1) local.set(key, files[0]!);
    else {
      const names = files.map((file) => JSON.stringify(file.path)).join(', ');
      for (const file of files) {
        twins.push({ path: file.path, action: 'skip', reason: `${names} differ only in case or Unicode normalisation: rename one`, attention: true });
      }
    }
  }
  const base = new Map(Object.entries(manifest?.files ?? {}).map(([path, entry]) => [pathKey(path), { path, entry }]));
  const remote = new Map(remoteFiles.map((file) => [pathKey(file.path), file]));
  const twinKeys = new Set([...byKey].filter(([, files]) => files.length > 1).map(([key]) => key));
  const keys = [...new Set([...local.keys(), ...base.keys(), ...remote.keys()])].filter((key) => !twinKeys.has(key)).sort();
  for (const key of twinKeys) {
    const kept = base.get(key);
    if (kept) twins.find((twin) => pathKey(twin.path) === key)!.before = kept.entry;
  }
  return { local, base, remote, twins, keys };
}

const sameVersion = (remote: RemoteFile, entry: ManifestEntry) => remote.series === entry.series && remote.version === entry.version && remote.sha256 === entry.sha256;

/** The manifest entry of a local file that both sides now hold as `remote` (same bytes: the sha256 is both sides'). */
const seen = (local: LocalFile, remote: RemoteFile): ManifestEntry => ({ series: remote.series, version: remote.version, sha256: remote.sha256, size: local.size, mtimeMs: local.mtimeMs });

export function planPush(scannedFiles: readonly LocalFile[], manifest: Manifest | null, listedFiles: readonly RemoteFile[], options: PlanOptions): PushAction[] {
  const { allowed: localFiles, refused } = allowedPaths(scannedFiles, 'not pushed');
  if (localFiles.length === 0) throw new CliError('the folder holds no files to push (it is missing, empty, or holds only ignored files): nothing done, nothing deleted', EXIT.error);
  const { local, base, remote, twins, keys } = sides(localFiles, manifest, allowedPaths(listedFiles, 'not pushed').allowed);
  const actions: PushAction[] = [...refused.map((action) => ({ ...action, action: 'skip' as const })), ...twins];
  const renamed = new Set<string>();

  // A file at a new path with the bytes of one gone from its recorded path, unchanged on the cut: a rename. The
  // series moves to the new path (its history stays), instead of a new series and a deletion.
  const gone = new Map<string, string>();
  for (const key of keys) {
    const was = base.get(key);
    const now = remote.get(key);
    if (was && !local.has(key) && now && sameVersion(now, was.entry)) gone.set(was.entry.sha256, key);
  }
  for (const key of keys) {
    const file = local.get(key);
    if (!file?.sha256 || base.has(key) || remote.has(key)) continue;
    const from = gone.get(file.sha256);
    if (from === undefined) continue;
    gone.delete(file.sha256);
    renamed.add(key).add(from);
    const was = base.get(from)!;
    actions.push({ action: 'upload', path: file.path, reason: `renamed from ${was.path}`, local: file, versionOf: remote.get(from)!, ifChanged: false, renamedFrom: was.path });
  }

  for (const key of keys) {
    if (renamed.has(key)) continue;
    const file = local.get(key);
    const was = base.get(key)?.entry;
    const now = remote.get(key);
    const path = file?.path ?? base.get(key)?.path ?? now!.path;
    const before = was;
    if (file && !now) {
      if (!was) actions.push({ action: 'upload', path, reason: 'new', local: file, ifChanged: false });
      else if (file.sha256 === was.sha256) actions.push({ action: 'skip', path, reason: 'deleted on the cut (pull --delete moves it to .band/trash/)', before, deletionKept: true });
      else if (options.force) actions.push({ action: 'upload', path, reason: 'changed here, deleted on the cut (--force: uploaded as a new file)', local: file, ifChanged: false });
      else actions.push({ action: 'conflict', path, reason: 'changed here, deleted on the cut (--force uploads it)', before, attention: true });
    } else if (file && now) {
      const changedHere = !was || file.sha256 !== was.sha256;
      const changedThere = !was || !sameVersion(now, was);
      if (serverPath(file.path) !== now.path && !options.force) {
        // The same key, spelt otherwise: a rename in case only (`Vox_01.wav` → `vox_01.wav`), which a DAW or a
        // file system may make unasked, and which macOS and Windows could not tell from the same file. Never
        // merged into the series unasked.
        const reason = `differs only in case from ${now.path} on the cut: not pushed (rename it back, as pull does, or --force renames it on the cut)`;
        actions.push({ action: 'skip', path, reason, before, attention: true });
      } else if (file.sha256 === now.sha256) {
        if (serverPath(file.path) !== now.path) {
          actions.push({ action: 'upload', path, reason: `renamed from ${now.path}`, local: file, versionOf: now, ifChanged: false, renamedFrom: now.path, before });
        } else {
          const reason = !was ? 'already on the cut' : changedHere ? 'same on both sides' : 'unchanged';
          actions.push({ action: 'skip', path, reason, record: seen(file, now), before });
        }
      } else if (changedHere && !changedThere) actions.push({ action: 'upload', path, reason: 'changed', local: file, versionOf: now, ifChanged: true, before });
      else if (!changedHere) actions.push({ action: 'skip', path, reason: `changed on the cut (v${now.version}; pull to get it)`, before });
      else if (options.force) actions.push({ action: 'upload', path, reason: `changed on both sides (--force: uploaded after v${now.version})`, local: file, versionOf: now, ifChanged: false, before });
      else {
        const reason = was ? `changed here and on the cut (v${now.version}): --force uploads it as the next version` : 'a different file of this path is on the cut: --force uploads this one as its next version';
        actions.push({ action: 'conflict', path, reason, before, attention: true });
      }
    } else if (!file && now) {
      if (!was) actions.push({ action: 'skip', path, reason: 'only on the cut (pull to get it)' });
      else if (!options.delete) actions.push({ action: 'skip', path, reason: 'deleted here (--delete deletes it on the cut)', before, deletionKept: true });
      else if (!sameVersion(now, was)) actions.push({ action: 'conflict', path, reason: `deleted here, changed on the cut (v${now.version}): kept`, before, attention: true });
      else actions.push({ action: 'delete', path, reason: 'deleted here', remote: now, before });
    }
    // Neither here nor on the cut: the manifest forgets it.
  }
  checkDeleteLimit(actions, manifest, options);
  return actions.sort(byPath);
}

/** `occupied`: what else the folder holds at a path (ignored files, links), which no conflict copy may be named after. */
export function planPull(scannedFiles: readonly LocalFile[], manifest: Manifest | null, listedFiles: readonly RemoteFile[], options: PlanOptions, occupied: readonly string[] = []): PullAction[] {
  const { allowed: listed, refused } = allowedPaths(listedFiles, 'not pulled');
  const remoteFiles = listed.map((file) => ({ ...file, path: serverPath(file.path) }));
  if (remoteFiles.length === 0) throw new CliError('the cut holds no files to pull: nothing done, nothing deleted', EXIT.error);
  const localFiles = allowedPaths(scannedFiles, 'not pulled').allowed;
  const { local, base, remote, twins, keys } = sides(localFiles, manifest, remoteFiles);
  const actions: PullAction[] = [...refused, ...twins].map((skip) => ({ ...skip, action: 'skip' as const }));
  const taken = new Set([...scannedFiles.map((file) => file.path), ...occupied, ...remoteFiles.map((file) => file.path)].map(pathKey));
  const renamed = new Set<string>();

  // A series at a new path whose bytes are those the folder holds, unchanged, at its old path: a rename on the cut,
  // done here by moving the file (no byte downloaded).
  for (const key of keys) {
    const now = remote.get(key);
    if (!now || base.has(key) || local.has(key)) continue;
    const fromKey = keys.find((other) => {
      const was = base.get(other);
      return was && was.entry.series === now.series && was.entry.sha256 === now.sha256 && !remote.has(other) && local.get(other)?.sha256 === was.entry.sha256;
    });
    if (fromKey === undefined) continue;
    renamed.add(key).add(fromKey);
    const from = local.get(fromKey)!.path;
    actions.push({ action: 'download', path: now.path, reason: `renamed on the cut from ${from}`, remote: now, moveFrom: from });
  }

  for (const key of keys) {
    if (renamed.has(key)) continue;
    const file = local.get(key);
    const was = base.get(key)?.entry;
    const now = remote.get(key);
    const before = was;
    if (now && !file) {
      const reason = !was ? 'new' : sameVersion(now, was) ? 'deleted here, unchanged on the cut: restored' : `changed on the cut (v${now.version})`;
      actions.push({ action: 'download', path: now.path, reason, remote: now, before });
    } else if (now && file) {
      const path = file.path;
      const changedHere = !was || file.sha256 !== was.sha256;
      const changedThere = !was || !sameVersion(now, was);
      if (file.sha256 === now.sha256) {
        if (serverPath(file.path) !== now.path) actions.push({ action: 'download', path: now.path, reason: `renamed to the cut's spelling (${file.path} here)`, remote: now, moveFrom: file.path, before });
        else actions.push({ action: 'skip', path, reason: !was ? 'already here' : changedHere ? 'same on both sides' : 'unchanged', record: seen(file, now), before });
      } else if (changedThere && !changedHere) actions.push({ action: 'download', path, reason: `changed on the cut (v${now.version})`, remote: now, before });
      else if (!changedThere) actions.push({ action: 'skip', path, reason: 'changed here (push uploads it)', before });
      else if (options.force) actions.push({ action: 'download', path, reason: `changed on both sides (--force: the local file goes to .band/trash/)`, remote: now, trashFirst: true, before });
      else {
        const copyPath = conflictCopyPath(path, now.version, (candidate) => taken.has(pathKey(candidate)));
        taken.add(pathKey(copyPath));
        const reason = `${was ? 'changed here and on the cut' : 'a different file of this path is on the cut'}: v${now.version} written beside it as ${copyPath}`;
        actions.push({ action: 'conflict', path, reason, remote: now, copyPath, before, attention: true });
      }
    } else if (file && !now) {
      const path = file.path;
      if (!was) actions.push({ action: 'skip', path, reason: 'only here (push uploads it)' });
      else if (!options.delete) actions.push({ action: 'skip', path, reason: 'deleted on the cut (--delete moves it to .band/trash/)', before, deletionKept: true });
      else if (file.sha256 !== was.sha256) actions.push({ action: 'skip', path, reason: 'deleted on the cut, changed here: kept', before, attention: true });
      else actions.push({ action: 'delete', path, reason: 'deleted on the cut (moved to .band/trash/)', local: file, before });
    }
  }
  checkDeleteLimit(actions, manifest, options);
  return actions.sort(byPath);
}

function checkDeleteLimit(actions: readonly { action: ActionKind }[], manifest: Manifest | null, options: PlanOptions): void {
  const deletions = actions.filter((action) => action.action === 'delete').length;
  const limit = options.maxDelete ?? defaultMaxDelete(Object.keys(manifest?.files ?? {}).length);
  if (deletions > limit) {
    throw new CliError(`this run would delete ${deletions} files, more than --max-delete ${limit}: nothing done (raise --max-delete if that is meant)`, EXIT.error);
  }
}

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
