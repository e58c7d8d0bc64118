// How session paths are compared and named. A folder's paths are relative POSIX paths; the server keeps them
// NFC-normalised and unique case-insensitively (§16), so two paths are "the same" when their keys are equal.
import path from 'node:path';
import { usageError } from '../exit-codes.js';

/** The key two paths share when the server would hold them as one (NFC, Unicode case folding): the SDK's. */
export { filePathKey as pathKey } from '@bandcollab/sdk';

/** A path as the server stores it (NFC), for comparing a local path with a remote one exactly. */
export function serverPath(relative: string): string {
  return relative.normalize('NFC');
}

/**
 * Where `pull` writes the remote version `version` beside a local file it must not overwrite:
 * `.band-conflict-v<N>` before the last extension of the last segment (appended when there is none), with
 * `-2`, `-3`… when that name is taken (`taken` compares keys, as the folder's file system may).
 */
export function conflictCopyPath(relative: string, version: number, taken: (candidate: string) => boolean): string {
  const slash = relative.lastIndexOf('/');
  const dir = relative.slice(0, slash + 1);
  const base = relative.slice(slash + 1);
  const extension = path.posix.extname(base);
  const stem = base.slice(0, base.length - extension.length);
  const marker = `.band-conflict-v${version}`;
  for (let n = 1; ; n += 1) {
    const candidate = `${dir}${stem}${marker}${n === 1 ? '' : `-${n}`}${extension}`;
    if (!taken(candidate)) return candidate;
  }
}

/**
 * A `--cut` value: an id alone, or `project/vibe/cut` where each part is an id or a name and a `/` inside a
 * name is written `\/` (and a backslash `\\`).
 */
export function parseCutPath(value: string): { project?: string; vibe?: string; cut: string } {
  const parts: string[] = [];
  let part = '';
  for (let i = 0; i < value.length; i += 1) {
    const char = value[i]!;
    if (char === '\\' && (value[i + 1] === '/' || value[i + 1] === '\\')) {
      part += value[i + 1];
      i += 1;
    } else if (char === '/') {
      parts.push(part);
      part = '';
    } else part += char;
  }
  parts.push(part);
  if (parts.length === 1 && parts[0] !== '') return { cut: parts[0]! };
  if (parts.length !== 3 || parts.some((part) => part.trim() === '')) {
    throw usageError(`--cut is a cut id or <project>/<vibe>/<cut> (write a "/" inside a name as "\\/"), not "${value}"`);
  }
  return { project: parts[0], vibe: parts[1], cut: parts[2]! };
}
