import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PersonalAccessToken } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { ANSI, type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

// Each test runs many commands against a real server; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 90_000 });

let server: TestServer;
let ana: CliUser;
let work: string;

beforeAll(async () => {
  server = await startTestServer();
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com');
  expect((await ana.band(['project', 'create', 'Summer EP'])).exitCode).toBe(0);
  expect((await ana.band(['project', 'create', 'Other'])).exitCode).toBe(0);
  work = await mkdtemp(path.join(os.tmpdir(), 'band-token-'));
});
afterAll(async () => {
  await ana?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

/** Every file under `dir`, recursively. */
/** The files band left under `dir`, but for Node's compile cache of band's own code (no user's data in it). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const compileCache = path.join(dir, '.cache', 'band', 'compile');
  return entries
    .filter((entry) => !entry.isDirectory() && !entry.parentPath.startsWith(compileCache))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

describe('band token', () => {
  it('creates a token printed once on stdout, lists it with its hint, scope, projects, expiry and last use, and revokes it by name', async () => {
    const created = await ana.band(['token', 'create', 'ci', '--scope', 'write', '--project', 'Summer EP', '--expires', '90d']);
    expect(created.exitCode, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(created.stdout).toMatch(/^bcp_[0-9A-Za-z]{36}\n$/);
    expect(created.stderr).toContain('Created token ci (write, 1 project, expires ');
    expect(created.stderr).toContain('not shown again');

    const asJson = await ana.band(['token', 'create', 'dashboards', '--expires', '30d', '--json']);
    const record = JSON.parse(asJson.stdout) as PersonalAccessToken & { token: string };
    expect(record).toMatchObject({ name: 'dashboards', scope: 'read', projectIds: null, token: expect.stringMatching(/^bcp_/) });

    const listed = await ana.band(['token', 'list']);
    expect(listed.exitCode).toBe(0);
    const [header, ...rows] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/^NAME +HINT +SCOPE +PROJECTS +EXPIRES +LAST USED +ID$/);
    expect(rows[0]).toMatch(new RegExp(`^dashboards +${record.tokenHint} +read +all yours +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d +never +${record.id}$`));
    expect(rows[1]).toMatch(new RegExp(`^ci +bcp_${token.slice(-4)} +write +Summer EP +`));
    expect(listed.stdout).not.toContain(token);

    const revoked = await ana.band(['token', 'revoke', 'ci', '--yes']);
    expect(revoked.exitCode).toBe(0);
    expect(revoked.stdout.trim()).toBe(`Revoked token ci (bcp_${token.slice(-4)})`);
    const names = (JSON.parse((await ana.band(['token', 'list', '--json'])).stdout) as PersonalAccessToken[]).map((t) => t.name);
    expect(names).toEqual(['dashboards']);
  });

  it('creates a review token with --scope review', async () => {
    const token = (await ana.band(['token', 'create', 'approver', '--scope', 'review', '--expires', '1d'])).stdout.trim();
    const listed = (JSON.parse((await ana.band(['token', 'list', '--json'])).stdout) as PersonalAccessToken[]).find((t) => t.name === 'approver');
    expect(listed?.scope).toBe('review');
    await ana.band(['token', 'revoke', 'approver', '--yes']);
    expect(token).toMatch(/^bcp_/);
  });

  it('refuses a lifetime outside 1h–366d and an unknown scope (usage, exit 2)', async () => {
    for (const args of [
      ['--expires', '59m'],
      ['--expires', '367d'],
      ['--expires', '7d', '--scope', 'admin'],
    ]) {
      const result = await ana.band(['token', 'create', 'x', ...args]);
      expect(result.exitCode, args.join(' ')).toBe(2);
    }
  });
});

describe('BAND_TOKEN with a personal access token', () => {
  it('band auth status says a token is in use, its scope, expiry and projects', async () => {
    const token = (await ana.band(['token', 'create', 'status', '--project', 'Summer EP', '--expires', '7d'])).stdout.trim();
    const ci = await cliUser(server.url, { BAND_TOKEN: token, CI: 'true' });
    try {
      const status = await ci.band(['auth', 'status']);
      expect(status.exitCode, status.stderr).toBe(0);
      expect(status.stdout).toContain('as ana <ana@example.com>');
      expect(status.stdout).toContain('BAND_TOKEN environment variable (nothing stored)');
      expect(status.stdout).toMatch(/Token: +a personal access token, scope read, expires \d{4}-\d\d-\d\d \d\d:\d\d/);
      expect(status.stdout).toMatch(/Projects: +Summer EP$/m);
      const json = JSON.parse((await ci.band(['auth', 'status', '--json'])).stdout);
      expect(json).toMatchObject({ email: 'ana@example.com', token: { scope: 'read', expiresAt: expect.any(String), projectIds: [expect.any(String)] } });
      const listed = await ci.band(['project', 'list', '--json']);
      expect(JSON.parse(listed.stdout).map((p: { name: string }) => p.name)).toEqual(['Summer EP']);
      const minting = await ci.band(['token', 'create', 'more', '--expires', '7d']);
      expect(minting.exitCode).toBe(1);
      expect(minting.stderr).toContain('cannot sign in, change its owner’s sign-in or manage tokens');
      // With BAND_TOKEN nothing is written under HOME (the README says so): no settings, no credentials.
      expect(await filesUnder(ci.home)).toEqual([]);
    } finally {
      await ci.cleanup();
    }
  });

  it('band publish in CI from a clean HOME with only BAND_TOKEN works end to end, stores nothing, and stops once the token is revoked', async () => {
    const token = (await ana.band(['token', 'create', 'release', '--scope', 'write', '--project', 'Summer EP', '--expires', '1d'])).stdout.trim();
    const ci = await cliUser(server.url, { CI: 'true', BAND_TOKEN: token });
    try {
      const master = path.join(work, 'master.wav');
      await writeFile(master, wavBytes(3, 50_000));
      // The built binary, as CI runs it.
      const published = await ci.bandProcess(['publish', master, '--project', 'Summer EP', '--vibe', 'Masters', '--cut', 'v1', '--create', '--share']);
      expect(published.exitCode, published.stderr).toBe(0);
      expect(published.stdout).toMatch(/^http:\/\/localhost:\d+\/share\/[A-Za-z0-9_-]+\n$/);
      expect(published.stderr).not.toMatch(ANSI);
      const shared = await fetch(`${server.url}/api/share/${published.stdout.trim().split('/share/')[1]}`);
      expect(Buffer.from(await shared.arrayBuffer())).toEqual(await readFile(master));
      expect(await filesUnder(ci.home)).toEqual([]);

      // The job run again (retried, or the mix unchanged) hands out the link it made before, not one more.
      const again = await ci.band(['publish', master, '--project', 'Summer EP', '--vibe', 'Masters', '--cut', 'v1', '--share']);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(again.stdout).toBe(published.stdout);
      const listed = await ana.band(['share', 'list', '--file', 'master.wav', '--cut', 'v1', '--vibe', 'Masters', '--project', 'Summer EP', '--json']);
      expect(listed.exitCode, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout)).toHaveLength(1);

      // Outside its project, publishing finds nothing and may not create the project (in-process from here on:
      // the end-to-end run above showed the binary, these are the same command's answers).
      const elsewhere = await ci.band(['publish', master, '--project', 'Other', '--vibe', 'Masters', '--cut', 'v1']);
      expect(elsewhere.exitCode).toBe(6);
      const creating = await ci.band(['publish', master, '--project', 'Brand new', '--vibe', 'Masters', '--cut', 'v1', '--create']);
      expect(creating.exitCode).toBe(1);
      expect(creating.stderr).toContain('cannot create projects');

      expect((await ana.band(['token', 'revoke', 'release', '--yes'])).exitCode).toBe(0);
      const revoked = await ci.band(['publish', master, '--project', 'Summer EP', '--vibe', 'Masters', '--cut', 'v1']);
      expect(revoked.exitCode).toBe(4);
      expect(await filesUnder(ci.home)).toEqual([]);
    } finally {
      await ci.cleanup();
    }
  });
});
