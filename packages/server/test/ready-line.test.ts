import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { spawnServer } from './support/process.js';
import { createTestDatabase } from './support/server.js';

it('the ready line names the address band uses (the public URL), as a band auth login to copy', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-ready-'));
  const running = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: await createTestDatabase() });
  onTestFinished(async () => {
    running.child.kill('SIGKILL');
    await running.exited;
    await rm(dataDir, { recursive: true, force: true });
  });
  const port = new URL(running.url).port;
  // A JSON log line like every other line of stdout (`pnpm start | jq`), its message the sentence to read.
  const ready = running
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; msg: string; url?: string; publicUrl?: string })
    .find((line) => line.msg.startsWith('listening on'));
  expect(ready).toMatchObject({
    level: 'info',
    msg: `listening on ${running.url} (band: band auth login --api-url http://localhost:${port})`,
    url: running.url,
    publicUrl: `http://localhost:${port}`,
  });
}, 60_000);
