// The analysis queue is durable: a job whose server is killed (SIGKILL) in the middle of its analysis is queued
// again and completes after a restart. A long run (a 5-minute FLAC analysed once in part and once whole, four
// server starts), so it runs in `pnpm test:reliability`, and in `pnpm test:s3` on the S3 driver.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, hasFfmpeg } from './analysis/ffmpeg.js';
import { analysed, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { spawnServer } from './support/process.js';
import { startTestServer, storageSettings } from './support/server.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-analysis-kill-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function fixture(name: string, seconds: number, options: string[]): string {
  const file = path.join(dir, name);
  generate('anoisesrc=color=pink:amplitude=0.25:sample_rate=48000', seconds, options, file);
  return file;
}

describe.skipIf(!hasFfmpeg)('the analysis queue', () => {
  it('keeps a job through a server kill in the middle of its analysis and completes it after the restart', async () => {
    const dataDir = await mkdtemp(path.join(dir, 'data-'));
    const first = await startTestServer({ ANALYSIS_CONCURRENCY: '0', DATA_DIR: dataDir });
    const env = { DATABASE_URL: first.env.DATABASE_URL!, DATA_DIR: dataDir, JWT_SECRET: first.env.JWT_SECRET!, ...storageSettings(first.env) };
    const api = client(first.url);
    const owner = await userWithCut(api);
    // Long enough that the analysis is still running when the server is killed (a few seconds of decoding).
    const long = fixture('long.flac', 300, ['-c:a', 'flac', '-ac', '2']);
    const created = await upload(api, owner.token, owner.cutId, 'long.flac', await readFile(long));
    expect(created.status).toBe(201);
    await first.close();

    const killed = await spawnServer({ ...env, ANALYSIS_CONCURRENCY: '1' });
    // On a DATA_DIR of its own: the spawned server holds the shared one.
    const probe = await startTestServer({ DATABASE_URL: env.DATABASE_URL, JWT_SECRET: env.JWT_SECRET, ANALYSIS_CONCURRENCY: '0' });
    try {
      // The job is running while the spawned server analyses it.
      const until = Date.now() + 30_000;
      while ((await probe.sql`select 1 from jobs where kind = 'analysis' and state = 'queued'`).length > 0) {
        if (Date.now() > until) throw new Error(`the spawned server never took the job:\n${killed.output()}`);
        await delay(50);
      }
      killed.child.kill('SIGKILL');
      await killed.exited;
      const [row] = await probe.sql`select analysis from files where id = ${created.body.id}`;
      expect(row!.analysis).toBe('pending');
      // Queued again as its instance's lock went with its session, or still running until the probe's sweep sees that.
      expect(await probe.sql`select payload->>'fileId' as file_id from jobs where kind = 'analysis' and state in ('queued', 'running')`).toEqual([{ file_id: created.body.id }]);
    } finally {
      killed.child.kill('SIGKILL');
      await probe.close();
    }

    const restarted = await startTestServer({ ...env, ANALYSIS_CONCURRENCY: '1' });
    try {
      const record = await analysed(client(restarted.url), owner.token, created.body.id, 120_000);
      expect(record).toMatchObject({ analysis: 'done', audio: { durationMs: 300_000, channels: 2 } });
      expect(await restarted.sql`select payload->>'fileId' as file_id from jobs where kind = 'analysis' and state in ('queued', 'running')`).toEqual([]);
    } finally {
      await restarted.close();
    }
    // Four server starts on a loaded machine.
  }, 60_000);
});
