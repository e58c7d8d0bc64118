// The analysis thread of a queue loop (src/analysis/isolated.ts): one thread for file after file, below the
// event loop's priority.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AnalysisThread } from '../../src/analysis/isolated.js';
import { toneWav } from '../support/files.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-analysis-thread-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/**
 * This process's threads and their nice values, from /proc. (Node 24 names a worker's thread WorkerThread,
 * Node 22 names every thread node: the analysis thread is told apart by being new and at nice 19.)
 */
function threads(): { id: string; nice: number }[] {
  return readdirSync('/proc/self/task').map((id) => ({ id, nice: Number(readFileSync(`/proc/self/task/${id}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]) }));
}

it.skipIf(process.platform !== 'linux')('analyses file after file in one thread that runs at nice 19, the event loop at its own', async () => {
  await mkdir(path.join(dir, 'files'));
  await writeFile(path.join(dir, 'files', 'tone.wav'), toneWav(1));
  const budget = { timeoutMs: 30_000, uploading: () => false, signal: new AbortController().signal };
  const before = new Set(threads().map((thread) => thread.id));
  const thread = new AnalysisThread({ storage: { driver: 'fs' }, dataDir: dir });
  try {
    const seen: string[][] = [];
    for (let i = 0; i < 3; i += 1) {
      expect(await thread.analyze({ task: 'analysis', key: 'files/tone.wav', type: 'CUT', extension: 'wav' }, budget)).toMatchObject({ status: 'audio' });
      seen.push(threads().filter((thread) => !before.has(thread.id) && thread.nice === 19).map((thread) => thread.id));
    }
    expect(seen[0]).toHaveLength(1);
    expect(seen).toEqual([seen[0], seen[0], seen[0]]);
    const main = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16];
    expect(Number(main)).toBe(0);
  } finally {
    await thread.close();
  }
});
