import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CutWithFiles, FileRecord, ShareLink, ShareRecord } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { readZip } from '../../server/test/support/zip.js';
import { apiGet, type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

// Each test runs several commands against a real server; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 90_000 });

let server: TestServer;
let ana: CliUser;
let token: string;
let work: string;
let cut: CutWithFiles;
const takes = Array.from({ length: 6 }, (_, i) => wavBytes(i, 20_000 + i));
const where = ['--vibe', 'Takes', '--project', 'Pull'];

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  server = await startTestServer();
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com');
  token = (await ana.band(['auth', 'token'])).stdout.trim();
  work = await mkdtemp(path.join(os.tmpdir(), 'band-archives-'));
  await ana.band(['project', 'create', 'Pull']);
  await ana.band(['vibe', 'create', 'Takes', '--project', 'Pull']);
  cut = JSON.parse((await ana.band(['cut', 'create', 'Take 3', ...where, '--json'])).stdout);
  for (const [i, bytes] of takes.entries()) await writeFile(path.join(work, `take-${i}.wav`), bytes);
  // Two files of one display name: the folder and the ZIP number the second.
  await writeFile(path.join(work, 'dup.wav'), wavBytes(99, 1_000));
  const uploaded = await ana.band(['file', 'upload', ...takes.map((_, i) => `take-${i}.wav`), ...where, '--cut', 'Take 3'], { cwd: work });
  expect(uploaded.exitCode).toBe(0);
  for (let i = 0; i < 2; i += 1) {
    expect((await ana.band(['file', 'upload', 'dup.wav', '--name', 'Mix', '--duplicate', ...where, '--cut', 'Take 3'], { cwd: work })).exitCode).toBe(0);
  }
  cut = await apiGet<CutWithFiles>(server.url, `/api/cuts/${cut.id}`, token);
});
afterAll(async () => {
  await ana?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

describe('band cut download', () => {
  it('saves the cut as one ZIP named after it, with a progress line, into the folder -o names', async () => {
    const result = await ana.band(['cut', 'download', 'Take 3', ...where], { cwd: work });
    expect(result.stderr).toMatch(/^downloading 1 file \(/m);
    expect(result.stdout).toMatch(/^Saved cut Take 3 to Take 3\.zip \(/);
    expect(result.exitCode).toBe(0);
    const { entries } = await readZip(await readFile(path.join(work, 'Take 3.zip')));
    // In upload order (the takes went up in parallel), the second Mix numbered.
    const names = cut.files.map((file) => (file.name === 'Mix' ? 'Mix.wav' : file.name));
    names[names.lastIndexOf('Mix.wav')] = 'Mix (2).wav';
    expect(entries.map((entry) => entry.name)).toEqual(names);
    for (const [i, bytes] of takes.entries()) expect(entries.find((entry) => entry.name === `take-${i}.wav`)!.bytes.equals(bytes)).toBe(true);

    const into = await mkdtemp(path.join(work, 'into-'));
    const json = await ana.band(['cut', 'download', cut.id, '-o', into, '--json'], { cwd: work });
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: cut.id, name: 'Take 3' });
    expect((await readFile(path.join(into, 'Take 3.zip'))).equals(await readFile(path.join(work, 'Take 3.zip')))).toBe(true);
  });

  it('writes the ZIP to stdout with -o -, and nothing else there', async () => {
    const before = await readdir(work);
    const result = await ana.band(['cut', 'download', 'Take 3', ...where, '-o', '-'], { cwd: work });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const { entries } = await readZip(result.stdoutBytes);
    const names = cut.files.map((file) => (file.name === 'Mix' ? 'Mix.wav' : file.name));
    names[names.lastIndexOf('Mix.wav')] = 'Mix (2).wav';
    expect(entries.map((entry) => entry.name)).toEqual(names);
    for (const [i, bytes] of takes.entries()) expect(entries.find((entry) => entry.name === `take-${i}.wav`)!.bytes.equals(bytes)).toBe(true);
    expect(entries.find((entry) => entry.name === 'Mix.wav')!.bytes.equals(wavBytes(99, 1_000))).toBe(true);
    expect(entries.find((entry) => entry.name === 'Mix (2).wav')!.bytes.equals(wavBytes(99, 1_000))).toBe(true);
    // No file was written for it.
    expect(await readdir(work)).toEqual(before);
  });
});

describe('band file download --cut', () => {
  it('saves every file into --dir in parallel, then re-runs cheaply with --skip-existing', async () => {
    const dir = path.join(work, 'pulled');
    const first = await ana.band(['file', 'download', '--cut', 'Take 3', ...where, '--dir', 'pulled', '--jobs', '4', '--json'], { cwd: work });
    expect(first.stderr).toMatch(/^downloading 8 files \(/m);
    expect(first.stderr).toMatch(/Downloaded 8 files \(.*\) to .*pulled in .* s; 0 skipped \(already there, same sha256\); 0 failed/);
    expect(first.exitCode).toBe(0);
    expect((JSON.parse(first.stdout) as FileRecord[]).map((record) => record.id)).toEqual(cut.files.map((file) => file.id));
    expect((await readdir(dir)).sort()).toEqual([...takes.map((_, i) => `take-${i}.wav`), 'Mix (2).wav', 'Mix.wav'].sort());
    for (const [i, bytes] of takes.entries()) expect((await readFile(path.join(dir, `take-${i}.wav`))).equals(bytes)).toBe(true);

    const again = await ana.band(['file', 'download', '--cut', cut.id, '--dir', dir, '--skip-existing'], { cwd: work });
    expect(again.stderr).toMatch(/Downloaded 0 files .* 8 skipped/);
    expect(again.exitCode).toBe(0);

    // A missing file is fetched again; a changed local copy is never replaced without --force.
    await writeFile(path.join(dir, 'take-1.wav'), 'changed here');
    await rm(path.join(dir, 'Mix (2).wav'));
    const untouched = (await stat(path.join(dir, 'take-0.wav'))).mtimeMs;
    const refused = await ana.band(['file', 'download', '--cut', cut.id, '--dir', dir, '--skip-existing', '--jobs', '2'], { cwd: work });
    expect(refused.stderr).toMatch(/take-1\.wav already exists .*--force/);
    expect(refused.stderr).toMatch(/Downloaded 1 file .* 6 skipped .* 1 failed/);
    expect(refused.exitCode).toBe(3);
    expect(await readFile(path.join(dir, 'take-1.wav'), 'utf8')).toBe('changed here');
    await rm(path.join(dir, 'Mix (2).wav'));
    const third = await ana.band(['file', 'download', '--cut', cut.id, '--dir', dir, '--skip-existing', '--force', '--jobs', '2'], { cwd: work });
    expect(third.stderr).toMatch(/Downloaded 2 files .* 6 skipped/);
    expect(sha256(await readFile(path.join(dir, 'take-1.wav')))).toBe(sha256(takes[1]!));
    expect(await readFile(path.join(dir, 'Mix (2).wav'))).toHaveLength(1_000 + 12);
    expect((await stat(path.join(dir, 'take-0.wav'))).mtimeMs).toBe(untouched);
    expect((await readdir(dir)).some((name) => name.endsWith('.part'))).toBe(false);
  });

  it('refuses options of the other mode as usage errors', async () => {
    expect((await ana.band(['file', 'download'], { cwd: work })).exitCode).toBe(2);
    expect((await ana.band(['file', 'download', '--cut', cut.id, '-o', 'x'], { cwd: work })).exitCode).toBe(2);
    expect((await ana.band(['file', 'download', cut.files[0]!.id, '--dir', 'x'], { cwd: work })).exitCode).toBe(2);
  });
});

describe('band cut share, band share list and revoke', () => {
  it('shares a cut, lists its links with their use, and revokes one by id', async () => {
    const shared = await ana.band(['cut', 'share', 'Take 3', ...where, '--expires', '7d', '--json']);
    expect(shared.exitCode).toBe(0);
    const link = JSON.parse(shared.stdout) as ShareLink;
    expect(link.shareUrl).toMatch(new RegExp(`/share/${link.token}$`));
    expect((await fetch(`${server.url}/share/${link.token}`)).status).toBe(200);

    const listed = await ana.band(['share', 'list', '--cut', 'Take 3', ...where, '--json']);
    expect(listed.exitCode).toBe(0);
    const [record] = JSON.parse(listed.stdout) as ShareRecord[];
    expect(record).toMatchObject({ accessCount: 1, expiresAt: link.expiresAt, createdBy: { name: 'ana' } });
    const table = await ana.band(['share', 'list', '--cut', cut.id]);
    expect(table.stdout).toMatch(/^ID\s+CREATED BY\s+CREATED\s+EXPIRES\s+DOWNLOAD\s+PLAYS\s+DOWNLOADS\s+ACCESSES\s+LAST ACCESS/);
    expect(table.stdout).toContain(record!.id);
    expect(table.stdout).not.toContain(link.token);

    const revoked = await ana.band(['share', 'revoke', record!.id]);
    expect(revoked.stdout.trim()).toBe(`Revoked link ${record!.id}`);
    expect(revoked.exitCode).toBe(0);
    expect((await fetch(`${server.url}/share/${link.token}`)).status).toBe(404);
    expect((await ana.band(['share', 'list', '--cut', cut.id])).stdout.trim()).toBe('No live links');
    expect((await ana.band(['share', 'revoke', record!.id])).exitCode).not.toBe(0);
  });

  it('lists the links of a file by name within its cut', async () => {
    await ana.band(['file', 'share', 'take-2.wav', '--cut', 'Take 3', ...where]);
    const listed = await ana.band(['share', 'list', '--file', 'take-2.wav', '--cut', 'Take 3', ...where, '--json']);
    expect(listed.exitCode).toBe(0);
    expect(JSON.parse(listed.stdout)).toHaveLength(1);
    expect((await ana.band(['share', 'list'])).exitCode).toBe(2);
  });
});
