// The files a command names: paths, and glob patterns expanded here (so they work the same in every shell,
// and quoted patterns such as "takes/**/*.wav" are not limited by the shell's argument length).
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { usageError } from './exit-codes.js';

export interface LocalFile {
  path: string;
  size: number;
}

/** Paths and glob patterns, relative to `cwd`, to a sorted, de-duplicated list of files with their sizes. */
export async function expand(patterns: string[], cwd: string): Promise<LocalFile[]> {
  const paths: string[] = [];
  for (const pattern of patterns) {
    if (existsSync(path.resolve(cwd, pattern)) || !/[*?[\]{}]/.test(pattern)) {
      paths.push(pattern);
      continue;
    }
    const { glob } = await import('tinyglobby');
    const matches = await glob(pattern, { cwd, onlyFiles: true, expandDirectories: false });
    if (matches.length === 0) throw usageError(`no files match ${pattern}`);
    paths.push(...matches.sort());
  }
  const files: LocalFile[] = [];
  for (const file of [...new Set(paths.map((p) => path.resolve(cwd, p)))]) {
    const info = await stat(file).catch(() => {
      throw usageError(`no such file: ${path.relative(cwd, file) || file}`);
    });
    if (info.isDirectory()) {
      const shown = path.relative(cwd, file) || '.';
      throw usageError(`${shown} is a directory; to upload the files in it, give a glob: "${path.join(shown, '*')}" (or "${path.join(shown, '**', '*.wav')}" for its WAVs at any depth)`);
    }
    if (!info.isFile()) throw usageError(`not a file: ${file}`);
    files.push({ path: file, size: info.size });
  }
  return files;
}
