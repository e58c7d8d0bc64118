import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { spawnServer } from './support/process.js';
import { createTestDatabase } from './support/server.js';

/** The ready lines of a server's stdout: JSON log lines like every other (`pnpm start | jq`). */
const readyLines = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; msg: string; url?: string; publicUrl?: string })
    .filter((line) => line.msg.startsWith('listening on'));

it('the ready line names the address band uses (the public URL), as a band auth register to copy on an empty server, then a login', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-ready-'));
  const databaseUrl = await createTestDatabase();
  const running = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
  onTestFinished(async () => {
    running.child.kill('SIGKILL');
    await running.exited;
    await rm(dataDir, { recursive: true, force: true });
  });
  const port = new URL(running.url).port;
  // A JSON log line like every other line of stdout (`pnpm start | jq`), its message the sentence to read.
  const ready = readyLines(running.output())[0];
  expect(ready).toMatchObject({
    level: 'info',
    msg: `listening on ${running.url} (band: band auth register --api-url http://localhost:${port})`,
    url: running.url,
    publicUrl: `http://localhost:${port}`,
  });

  const registered = await fetch(`${running.url}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'first@example.com', password: 'first-password', name: 'First' }),
  });
  expect(registered.status).toBe(201);
  running.child.kill('SIGKILL');
  await running.exited;
  const again = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
  onTestFinished(async () => {
    again.child.kill('SIGKILL');
    await again.exited;
  });
  expect(readyLines(again.output())[0]!.msg).toBe(`listening on ${again.url} (band: band auth login --api-url http://localhost:${new URL(again.url).port})`);
}, 90_000);
