import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CutWithFiles, StorageStats } from '@bandcollab/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { apiGet, type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

// `band storage` with a server quota (USER_QUOTA_MB), and an upload the quota refuses (507).

let server: TestServer;
let ana: CliUser;
let work: string;

beforeAll(async () => {
  server = await startTestServer({ USER_QUOTA_MB: '1' });
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com');
  work = await mkdtemp(path.join(os.tmpdir(), 'band-quota-'));
});
afterAll(async () => {
  await ana?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

it('shows the quota, --json exactly as the API, and reports an upload over it with exit code 1', async () => {
  const json = async <T>(args: string[]) => JSON.parse((await ana.band([...args, '--json'])).stdout) as T;
  await json(['project', 'create', 'Quota']);
  await json(['vibe', 'create', 'Mixes', '--project', 'Quota']);
  const cut = await json<CutWithFiles>(['cut', 'create', 'Final', '--vibe', 'Mixes', '--project', 'Quota']);
  const local = path.join(work, 'take.wav');
  const bytes = wavBytes(1, 600 * 1024);
  await writeFile(local, bytes);
  expect((await ana.band(['file', 'upload', local, '--cut', cut.id])).exitCode).toBe(0);

  const token = (await ana.band(['auth', 'token'])).stdout.trim();
  const stats = await json<StorageStats>(['storage']);
  expect(stats.quota).toEqual({ limitBytes: 1024 * 1024, usedBytes: bytes.length });
  expect(stats).toEqual(await apiGet<StorageStats>(server.url, '/api/files/storage', token));
  expect((await ana.band(['storage'])).stdout).toContain('Quota: 600.0 KiB of 1.0 MiB used (58%)');

  // The same content again, on purpose: it no longer fits.
  const refused = await ana.band(['file', 'upload', local, '--cut', cut.id, '--duplicate']);
  expect(refused.exitCode).toBe(1);
  expect(refused.stderr).toContain('quota of 1 MiB');
});

it("band project largest lists the project's largest files as the API does, and refuses a --type or --limit the API would", async () => {
  const token = (await ana.band(['auth', 'token'])).stdout.trim();
  const project = JSON.parse((await ana.band(['project', 'show', 'Quota', '--json'])).stdout) as { id: string };
  const listed = await ana.band(['project', 'largest', 'Quota', '--type', 'cut', '--limit', '5', '--json']);
  expect(listed.exitCode, listed.stderr).toBe(0);
  const files = JSON.parse(listed.stdout) as { name: string }[];
  expect(files.map((file) => file.name)).toEqual(['take.wav']);
  expect(files).toEqual(await apiGet(server.url, `/api/projects/${project.id}/largest-files?type=CUT&limit=5`, token));
  const table = await ana.band(['project', 'largest', 'Quota']);
  expect(table.stdout).toMatch(/^SIZE +NAME +TYPE +PROJECT +UPLOADED BY +ID\n600\.0 KiB +take\.wav +audio +Quota +ana@example\.com +[0-9a-f-]{36}\n$/);
  expect((await ana.band(['project', 'largest', 'Quota', '--type', 'STEM'])).stdout).toBe('No files\n');
  for (const flags of [['--limit', '0'], ['--limit', '101'], ['--type', 'song']]) {
    const refused = await ana.band(['project', 'largest', 'Quota', ...flags]);
    expect(refused.exitCode, flags.join(' ')).toBe(2);
    expect(refused.stderr).toContain(`${flags[0]} must be`);
  }
});
