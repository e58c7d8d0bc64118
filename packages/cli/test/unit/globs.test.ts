import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/exit-codes.js';
import { expand } from '../../src/globs.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'band-globs-'));
  await mkdir(path.join(dir, 'takes/old'), { recursive: true });
  await writeFile(path.join(dir, 'takes/b.wav'), 'bb');
  await writeFile(path.join(dir, 'takes/a.wav'), 'a');
  await writeFile(path.join(dir, 'takes/notes.txt'), 'notes');
  await writeFile(path.join(dir, 'takes/old/c.wav'), 'ccc');
  await writeFile(path.join(dir, 'odd[1].wav'), 'odd');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('expand (file arguments)', () => {
  it('expands patterns relative to the working directory, sorted, with sizes', async () => {
    expect(await expand(['takes/*.wav'], dir)).toEqual([
      { path: path.join(dir, 'takes/a.wav'), size: 1 },
      { path: path.join(dir, 'takes/b.wav'), size: 2 },
    ]);
    expect((await expand(['takes/**/*.wav'], dir)).map((file) => path.relative(dir, file.path))).toEqual(['takes/a.wav', 'takes/b.wav', 'takes/old/c.wav']);
  });

  it('keeps plain paths, drops duplicates, and takes an existing name with glob characters literally', async () => {
    const files = await expand(['takes/b.wav', 'takes/*.wav', path.join(dir, 'takes/a.wav'), 'odd[1].wav'], dir);
    expect(files.map((file) => path.relative(dir, file.path))).toEqual(['takes/b.wav', 'takes/a.wav', 'odd[1].wav']);
  });

  it('is a usage error for a pattern matching nothing, a missing file or a directory', async () => {
    await expect(expand(['takes/*.flac'], dir)).rejects.toMatchObject({ exitCode: EXIT.usage, message: 'no files match takes/*.flac' });
    await expect(expand(['takes/missing.wav'], dir)).rejects.toMatchObject({ exitCode: EXIT.usage, message: 'no such file: takes/missing.wav' });
    await expect(expand(['takes/old'], dir)).rejects.toMatchObject({ exitCode: EXIT.usage });
  });
});
