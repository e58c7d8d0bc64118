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
  expect(running.output()).toContain(`listening on ${running.url} (band: band auth login --api-url http://localhost:${port})\n`);
}, 60_000);
