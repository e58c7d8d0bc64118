import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AdminJobs, AdminStorage, AdminUser, CutWithFiles } from '@bandcollab/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { apiGet, type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

// A site admin's commands: band storage --by user|project [--top N], band user list|deactivate|activate, band admin jobs.

let server: TestServer;
let admin: CliUser;
let ben: CliUser;
let work: string;
let cutId: string;
const json = async <T>(user: CliUser, args: string[]) => {
  const result = await user.band([...args, '--json']);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
};

beforeAll(async () => {
  server = await startTestServer({ USER_QUOTA_MB: '1' });
  admin = await cliUser(server.url);
  ben = await cliUser(server.url);
  await registerWithCli(admin, 'admin@example.com'); // the first account: the site admin
  await registerWithCli(ben, 'ben@example.com');
  work = await mkdtemp(path.join(os.tmpdir(), 'band-admin-'));
  await json(ben, ['project', 'create', 'Loud']);
  await json(ben, ['vibe', 'create', 'Mixes', '--project', 'Loud']);
  const cut = await json<CutWithFiles>(ben, ['cut', 'create', 'Final', '--vibe', 'Mixes', '--project', 'Loud']);
  cutId = cut.id;
  await writeFile(path.join(work, 'take.wav'), wavBytes(1, 100 * 1024));
  expect((await ben.band(['file', 'upload', path.join(work, 'take.wav'), '--cut', cut.id])).exitCode).toBe(0);
});
afterAll(async () => {
  await admin?.cleanup();
  await ben?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

it('band storage --by user|project [--top N]: the API report as a table, --json exactly as the API', async () => {
  const token = (await admin.band(['auth', 'token'])).stdout.trim();
  const byUser = await json<AdminStorage>(admin, ['storage', '--by', 'user', '--top', '1']);
  expect(byUser).toEqual(await apiGet<AdminStorage>(server.url, '/api/admin/storage?by=user&top=1', token));
  const table = (await admin.band(['storage', '--by', 'user', '--top', '1'])).stdout;
  expect(table).toMatch(/ben@example\.com\s+100\.0 KiB\s+1\s+100\.0 KiB\s+0 B\s+0 B\s+0 B\s+-\s+9% of 1\.0 MiB/);
  expect(table).toContain('Largest files');
  expect(table).toMatch(/100\.0 KiB\s+take\.wav\s+audio\s+Loud\s+ben@example\.com/);

  const byProject = (await admin.band(['storage', '--by', 'project'])).stdout;
  expect(byProject).toMatch(/Loud\s+100\.0 KiB\s+1\s/);
  expect(byProject).not.toContain('Largest files');

  expect((await admin.band(['storage', '--by', 'cut'])).exitCode).toBe(2);
  expect((await admin.band(['storage', '--top', '3'])).exitCode).toBe(2);
  const member = await ben.band(['storage', '--by', 'user']);
  expect(member.exitCode).not.toBe(0);
  expect(member.stderr).toContain('Only a site ADMIN');
});

it('band user list, deactivate and activate: a deactivated account is signed out and cannot log in', async () => {
  const listed = await json<AdminUser[]>(admin, ['user', 'list']);
  expect(listed.map((user) => [user.email, user.role, user.active])).toEqual([
    ['admin@example.com', 'ADMIN', true],
    ['ben@example.com', 'MEMBER', true],
  ]);
  const benToken = (await ben.band(['auth', 'token'])).stdout.trim();
  const [take] = (await apiGet<CutWithFiles>(server.url, `/api/cuts/${cutId}`, benToken)).files;
  const shared = await fetch(`${server.url}/api/files/${take!.id}/share`, { method: 'POST', headers: { authorization: `Bearer ${benToken}`, 'content-type': 'application/json' }, body: '{}' });
  expect(shared.status).toBe(201);
  const off = await admin.band(['user', 'deactivate', 'BEN@example.com']);
  expect(off.exitCode, off.stderr).toBe(0);
  expect(off.stdout).toContain('ben@example.com is deactivated');
  expect(off.stdout).toContain('1 share link(s) suspended while it is deactivated:');
  expect(off.stdout).toContain('file "take.wav"');
  expect((await admin.band(['user', 'list'])).stdout).toMatch(/ben@example\.com\s+ben\s+MEMBER\s+deactivated/);
  expect((await ben.band(['project', 'list'])).exitCode).not.toBe(0);
  // Told so, as an authentication failure (exit 4), whether logging in or signing in for one run.
  const deactivated = /^error: This account is deactivated; a site administrator can activate it again \(request id [\w-]+\)\n$/;
  const login = await ben.band(['auth', 'login', '--email', 'ben@example.com', '--password-stdin'], { input: 'correct horse battery\n' });
  expect([login.exitCode, login.stderr]).toEqual([4, expect.stringMatching(deactivated)]);
  const forOneRun = await ben.band(['project', 'list'], { env: { BAND_EMAIL: 'ben@example.com', BAND_PASSWORD: 'correct horse battery' } });
  expect([forOneRun.exitCode, forOneRun.stderr]).toEqual([4, expect.stringMatching(deactivated)]);

  expect((await admin.band(['user', 'activate', 'ben@example.com'])).stdout).toContain('ben@example.com is active');
  expect((await admin.band(['user', 'deactivate', 'nobody@example.com'])).exitCode).not.toBe(0);
});

it('band admin jobs [--state --kind] and band admin jobs retry ID: the queue as the API reports it, a failed job run again', async () => {
  const token = (await admin.band(['auth', 'token'])).stdout.trim();
  const [job] = await server.sql<{ id: string }[]>`
    insert into jobs (kind, state, attempts, max_attempts, last_error, finished_at)
    values ('digest', 'failed', 5, 5, 'the mail server refused it', now()) returning id`;
  const overview = await json<AdminJobs>(admin, ['admin', 'jobs', '--state', 'failed', '--kind', 'digest']);
  expect(overview).toEqual(await apiGet<AdminJobs>(server.url, '/api/admin/jobs?state=failed&kind=digest', token));
  expect(overview.failed.map((failed) => failed.id)).toEqual([job!.id]);
  const table = (await admin.band(['admin', 'jobs'])).stdout;
  expect(table).toMatch(/digest\s+failed\s+1/);
  expect(table).toMatch(new RegExp(`${job!.id}\\s+digest\\s+5/5\\s+.*the mail server refused it`));

  const retried = await admin.band(['admin', 'jobs', 'retry', job!.id]);
  expect(retried.exitCode, retried.stderr).toBe(0);
  expect(retried.stdout).toContain(`Job ${job!.id} is queued again`);
  const again = await admin.band(['admin', 'jobs', 'retry', job!.id]);
  expect(again.exitCode).not.toBe(0);
  expect(again.stderr).toContain('only a failed job is retried');
});
