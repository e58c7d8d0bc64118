// What a newcomer tripped over (issue 18, "Rough edges in the CLI"): each one, as they ran into it.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FileRecord, Project, ShareLink } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PNG_BYTES } from '../../server/test/authz/fixture.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { type CliUser, cliUser, registerWithCli, type RunResult, wavBytes } from './support/cli.js';

vi.setConfig({ testTimeout: 60_000 });

let server: TestServer;
let admin: CliUser;
let adminRegistered: RunResult;
let work: string;

async function ok(user: CliUser, args: string[], cwd = work): Promise<RunResult> {
  const result = await user.band(args, { cwd });
  if (result.exitCode !== 0) throw new Error(`band ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  return result;
}

beforeAll(async () => {
  server = await startTestServer();
  admin = await cliUser(server.url);
  // The first account of a server is its site ADMIN.
  adminRegistered = await registerWithCli(admin, 'ada@example.com', 'correct horse battery', 'Ada');
  work = await mkdtemp(path.join(os.tmpdir(), 'band-rough-'));
  await writeFile(path.join(work, 'cover.png'), PNG_BYTES);
  await ok(admin, ['project', 'create', 'Demo', '--image', 'cover.png']);
  await ok(admin, ['vibe', 'create', 'Verse', '--project', 'Demo']);
  await ok(admin, ['cut', 'create', 'Take 1', '--vibe', 'Verse', '--project', 'Demo']);
});
afterAll(async () => {
  await admin?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

const cutFlags = ['--cut', 'Take 1', '--vibe', 'Verse', '--project', 'Demo'];

describe('--quiet', () => {
  it('prints nothing on stdout for a create (and --json still prints the record)', async () => {
    for (const args of [
      ['project', 'create', 'Quiet'],
      ['vibe', 'create', 'Q1', '--project', 'Quiet'],
      ['cut', 'create', 'C1', '--vibe', 'Q1', '--project', 'Quiet'],
      ['vibe', 'rename', 'Q1', 'Q2', '--project', 'Quiet'],
    ]) {
      const quiet = await ok(admin, [...args, '--quiet']);
      expect(quiet.stdout).toBe('');
      expect(quiet.stderr).toBe('');
    }
    const created = JSON.parse((await ok(admin, ['vibe', 'create', 'Q3', '--project', 'Quiet', '--quiet', '--json'])).stdout) as { name: string };
    expect(created.name).toBe('Q3');
  });
});

describe('errors', () => {
  it('say a validation failure once', async () => {
    const user = await cliUser(server.url);
    try {
      const result = await user.band(['auth', 'register', '--email', 'short@example.com', '--name', 'Short', '--password-stdin'], { input: 'short\n' });
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toMatch(/^error: password: must be at least 8 characters \(request id [\w-]+\)\n$/);
    } finally {
      await user.cleanup();
    }
  });

  it('suggest a glob for a directory to upload', async () => {
    await mkdir(path.join(work, 'takes'), { recursive: true });
    const result = await admin.band(['file', 'upload', 'takes', ...cutFlags], { cwd: work });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('error: takes is a directory; to upload the files in it, give a glob: "takes/*" (or "takes/**/*.wav" for its WAVs at any depth)\n');
  });
});

describe('band file download', () => {
  it('refuses to overwrite a file that is there unless --force', async () => {
    await writeFile(path.join(work, 'keep.wav'), wavBytes(1));
    await ok(admin, ['file', 'upload', 'keep.wav', ...cutFlags]);
    const dir = await mkdtemp(path.join(work, 'download-'));
    await writeFile(path.join(dir, 'keep.wav'), 'my own edit');

    const refused = await admin.band(['file', 'download', 'keep.wav', ...cutFlags], { cwd: dir });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toBe('error: keep.wav already exists; add --force to overwrite it, or -o to save elsewhere\n');
    expect(await readFile(path.join(dir, 'keep.wav'), 'utf8')).toBe('my own edit');

    await ok(admin, ['file', 'download', 'keep.wav', ...cutFlags, '--force'], dir);
    expect(await readFile(path.join(dir, 'keep.wav'))).toEqual(wavBytes(1));
  });
});

describe('the first hour', () => {
  it('tells the first account it is the site admin (a later one is not: see terminal.test)', () => {
    expect(adminRegistered.stderr).toContain('The first account on this server: you are its site admin');
  });

  it('file list is by name, whatever the upload order ("take 2" before "take 10")', async () => {
    await ok(admin, ['cut', 'create', 'Sorted', '--vibe', 'Verse', '--project', 'Demo']);
    for (const name of ['take 10.wav', 'Bass.wav', 'take 2.wav', 'amp.wav']) await writeFile(path.join(work, name), wavBytes(name.length, 2000));
    for (const name of ['take 10.wav', 'Bass.wav', 'take 2.wav', 'amp.wav']) await ok(admin, ['file', 'upload', name, '--cut', 'Sorted', '--vibe', 'Verse', '--project', 'Demo']);
    const listed = JSON.parse((await ok(admin, ['file', 'list', '--cut', 'Sorted', '--vibe', 'Verse', '--project', 'Demo', '--json'])).stdout) as FileRecord[];
    expect(listed.map((file) => file.name)).toEqual(['amp.wav', 'Bass.wav', 'take 2.wav', 'take 10.wav']);
  });
});

describe('band publish', () => {
  it('is idempotent: the same content already on the cut is reused (said on stderr), and so is the link --share made', async () => {
    await writeFile(path.join(work, 'master.wav'), wavBytes(9, 50_000));
    const args = ['publish', 'master.wav', '--project', 'Demo', '--vibe', 'Masters', '--cut', 'v1', '--create', '--share'];
    const first = await ok(admin, args);
    expect(first.stderr).not.toContain('already');

    const again = await ok(admin, [...args, '--json']);
    const link = JSON.parse(again.stdout) as ShareLink;
    expect(link.shareUrl).toContain('/share/');
    expect(link.shareUrl).toBe(first.stdout.trim());
    expect(again.stderr).toBe('master.wav is unchanged: already on cut v1 (the same content), not uploaded again\n');

    const cut = JSON.parse((await ok(admin, ['file', 'list', '--cut', 'v1', '--vibe', 'Masters', '--project', 'Demo', '--json'])).stdout) as FileRecord[];
    expect(cut).toHaveLength(1);
    const shared = await fetch(`${server.url}/api/share/${link.token}`);
    expect(Buffer.from(await shared.arrayBuffer())).toEqual(wavBytes(9, 50_000));

    const plain = await ok(admin, ['publish', 'master.wav', '--project', 'Demo', '--vibe', 'Masters', '--cut', 'v1']);
    expect(plain.stderr).toBe('master.wav is unchanged: already on cut v1 (the same content), not uploaded again\n');
    expect(plain.stdout).toBe(`Published master.wav (${cut[0]!.id})\n`);

    // Changed content is a new file on the cut.
    await writeFile(path.join(work, 'master.wav'), wavBytes(10, 50_000));
    const published = JSON.parse((await ok(admin, ['publish', 'master.wav', '--project', 'Demo', '--vibe', 'Masters', '--cut', 'v1', '--json'])).stdout) as FileRecord;
    const files = JSON.parse((await ok(admin, ['file', 'list', '--cut', 'v1', '--vibe', 'Masters', '--project', 'Demo', '--json'])).stdout) as FileRecord[];
    expect(files.map((file) => file.id)).toEqual([cut[0]!.id, published.id]);
  });
});

describe('words people use', () => {
  it('file list shows the type in words; band storage counts the cover and says "1 user"', async () => {
    const list = await ok(admin, ['file', 'list', ...cutFlags]);
    expect(list.stdout).toMatch(/^keep\.wav\s+v1\s+audio\s+/m);

    const projects = JSON.parse((await ok(admin, ['project', 'list', '--json'])).stdout) as Project[];
    const storage = await ok(admin, ['storage']);
    expect(storage.stdout).toMatch(/^images\s+\S+ B\s+1$/m);
    expect(storage.stdout).toContain(`Whole site: 1 user, ${projects.length} projects`);

  });
});
