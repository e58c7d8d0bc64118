import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

const run = promisify(execFile);

/** What a clean clone does not have: built output, data, the git directory, packed and installed examples. */
const NOT_IN_A_CLONE = new Set(['.git', 'dist', 'data', 'coverage', '.bench']);
const NOT_IN_A_CLONE_PATHS = new Set(['node_modules', path.join('examples', 'node_modules'), path.join('examples', 'package-lock.json')]);

export interface RepoCopy {
  /** The copy's root, outside this checkout. */
  root: string;
  /** Runs a command in the copy (or a directory of it) and collects its output; rejects on a non-zero exit. */
  run(command: string, args: string[], options?: { cwd?: string; env?: Record<string, string> }): Promise<{ stdout: string; stderr: string }>;
  remove(): Promise<void>;
}

/**
 * This checkout as a fresh clone after `pnpm install`: the sources without anything built, so a test can
 * run build and install commands there without rebuilding the `dist/` directories that other tests run at
 * the same time. The packages' own `node_modules` (pnpm's relative links) are copied; the root one, which
 * they point into, is a link to this checkout's. `builtPackages` (`['sdk']`) bring their `dist/` along, as
 * `pnpm test`'s build made it, for a test about what is done with a build rather than about making one.
 */
export async function copyRepository({ builtPackages = [] }: { builtPackages?: string[] } = {}): Promise<RepoCopy> {
  const kept = new Set(builtPackages.map((name) => path.join('packages', name, 'dist')));
  const parent = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-copy-'));
  const root = path.join(parent, 'bandcollab');
  await cp(REPO_ROOT, root, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => {
      const relative = path.relative(REPO_ROOT, source);
      if (kept.has(relative)) return true;
      return !NOT_IN_A_CLONE_PATHS.has(relative) && !NOT_IN_A_CLONE.has(path.basename(source)) && !source.endsWith('.tgz');
    },
  });
  await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'));
  return {
    root,
    run: (command, args, options = {}) =>
      run(command, args, { cwd: path.join(root, options.cwd ?? '.'), env: { ...process.env, ...options.env }, maxBuffer: 64 * 1024 * 1024 }),
    remove: () => rm(parent, { recursive: true, force: true }),
  };
}
