import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CutWithFiles, FileRecord, ProjectDetail, ShareLink } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { ANSI, apiGet, BAND, type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

// Each test runs many commands against a real server; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 90_000 });

let server: TestServer;
let ana: CliUser;
let token: string;
let work: string;
let cut: CutWithFiles;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  server = await startTestServer();
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com');
  token = (await ana.band(['auth', 'token'])).stdout.trim();
  work = await mkdtemp(path.join(os.tmpdir(), 'band-upload-'));
  await mkdir(path.join(work, 'takes'));
  for (let i = 0; i < 20; i += 1) await writeFile(path.join(work, 'takes', `take-${String(i).padStart(2, '0')}.wav`), wavBytes(i, 30_000 + i));
  await ana.band(['project', 'create', 'Bulk']);
  await ana.band(['vibe', 'create', 'Takes', '--project', 'Bulk']);
  cut = JSON.parse((await ana.band(['cut', 'create', 'Session 1', '--vibe', 'Takes', '--project', 'Bulk', '--json'])).stdout);
});
afterAll(async () => {
  await ana?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

describe('band file upload', () => {
  it('uploads 20 files from a glob with --jobs 4, printing the records with --json', async () => {
    const result = await ana.band(['file', 'upload', 'takes/*.wav', '--cut', 'Session 1', '--vibe', 'Takes', '--project', 'Bulk', '--jobs', '4', '--json'], { cwd: work });
    expect(result.stderr).toMatch(/^uploading 20 files \(/m);
    expect(result.stderr).toMatch(/Uploaded 20 files \(.* in .* s; 0 skipped \(already on the cut\); 0 failed/);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).not.toMatch(ANSI);

    const records = JSON.parse(result.stdout) as FileRecord[];
    expect(records.map((r) => r.name)).toEqual(Array.from({ length: 20 }, (_, i) => `take-${String(i).padStart(2, '0')}.wav`));
    const onServer = (await apiGet<CutWithFiles>(server.url, `/api/cuts/${cut.id}`, token)).files;
    expect(onServer).toHaveLength(20);
    for (const record of records) {
      const local = await readFile(path.join(work, 'takes', record.name));
      expect(record.sha256).toBe(sha256(local));
      // The server's analysis and preview of these bytes (they only look like WAV) may have failed them meanwhile.
      expect(onServer).toContainEqual({ ...record, analysis: expect.stringMatching(/^(pending|failed)$/), preview: expect.anything() });
    }
  });

  it('uploads nothing again with --skip-existing, and only what is missing after a change', async () => {
    const again = await ana.band(['file', 'upload', 'takes/*.wav', '--cut', cut.id, '--skip-existing', '--json'], { cwd: work });
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toContain('Uploaded 0 files (0 B)');
    expect(again.stderr).toContain('20 skipped (already on the cut)');
    // Found before the transfer: no "uploading 20 files" for files that are not sent.
    expect(again.stderr).not.toContain('uploading');
    expect(JSON.parse(again.stdout)).toHaveLength(20);
    expect((await apiGet<CutWithFiles>(server.url, `/api/cuts/${cut.id}`, token)).files).toHaveLength(20);

    await writeFile(path.join(work, 'takes', 'take-20.wav'), wavBytes(20));
    const missing = await ana.band(['file', 'upload', 'takes/*.wav', '--cut', cut.id, '--skip-existing', '--quiet'], { cwd: work });
    expect(missing).toMatchObject({ exitCode: 0, stderr: '' });
    const files = (await apiGet<CutWithFiles>(server.url, `/api/cuts/${cut.id}`, token)).files;
    expect(files).toHaveLength(21);
    await rm(path.join(work, 'takes', 'take-20.wav'));
  });

  it('times the upload on the clock it is given', async () => {
    await writeFile(path.join(work, 'timed.wav'), wavBytes(21));
    // An hour behind (the stored access token stays fresh) and a minute further at each reading.
    let clock = Date.now() - 3_600_000;
    const result = await ana.band(['file', 'upload', 'timed.wav', '--cut', cut.id], { cwd: work, now: () => (clock += 60_000) });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain('Uploaded 1 file (4.0 KiB) in 60.0 s;');
  });

  it('exits 3 when some files failed, naming each failure, after uploading the rest', async () => {
    await mkdir(path.join(work, 'mixed'));
    await writeFile(path.join(work, 'mixed', 'good.wav'), wavBytes(100));
    await writeFile(path.join(work, 'mixed', 'fake.wav'), Buffer.from('this is not audio at all'));
    await writeFile(path.join(work, 'mixed', 'notes.txt'), 'lyrics');
    const result = await ana.band(['file', 'upload', 'mixed/*', '--cut', cut.id], { cwd: work });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(/^error: .*fake\.wav: /m);
    expect(result.stderr).toMatch(/^error: .*notes\.txt: .*accepted types/m);
    expect(result.stderr).toMatch(/^error: 2 of 3 files failed$/m);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const names = (await apiGet<CutWithFiles>(server.url, `/api/cuts/${cut.id}`, token)).files.map((f) => f.name);
    expect(names).toContain('good.wav');
    expect(names).not.toContain('fake.wav');
  });

  it('reports the server refusing a file while band is still sending it, not a closed connection', async () => {
    // Leading bytes that are no WAV: refused as soon as they arrive, with megabytes of the file still to send.
    await writeFile(path.join(work, 'noise.wav'), Buffer.alloc(3 * 1024 * 1024));
    const result = await ana.band(['file', 'upload', 'noise.wav', '--cut', cut.id], { cwd: work });
    expect(result.stderr).toMatch(/noise\.wav: Accepted files are .*with contents that match the extension/);
    expect(result.stderr).not.toMatch(/connection was closed/i);
    expect(result.exitCode).toBe(1);
  });
});

describe('Ctrl-C', () => {
  it('interrupts an upload with exit 130', async () => {
    const big = path.join(work, 'long.wav');
    await writeFile(big, wavBytes(9, 16));
    await truncate(big, 90 * 1024 * 1024);
    const child = spawn(process.execPath, [BAND, 'file', 'upload', big, '--cut', cut.id], { env: ana.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.includes('uploading 1 file')) child.kill('SIGINT');
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(130);
  });
});

describe('band publish', () => {
  it('in CI (no terminal, CI=true, BAND_EMAIL/BAND_PASSWORD) creates what is missing, uploads, shares, prints the URL', async () => {
    const ci = await cliUser(server.url, { CI: 'true', BAND_EMAIL: 'ana@example.com', BAND_PASSWORD: 'correct horse battery' });
    try {
      const master = path.join(work, 'master.wav');
      await writeFile(master, wavBytes(7, 100_000));
      const args = ['publish', master, '--project', 'Releases', '--vibe', 'Masters', '--cut', 'v1.0'];

      const refused = await ci.band(args);
      expect(refused.exitCode).toBe(6);
      expect(refused.stderr.trim()).toBe('error: no project named "Releases" among your projects (add --create to create it)');

      // The built binary, as CI runs it.
      const published = await ci.bandProcess([...args, '--create', '--share', '--expires', '7d']);
      expect(published.exitCode).toBe(0);
      expect(published.stdout).toMatch(/^http:\/\/localhost:\d+\/share\/[A-Za-z0-9_-]+\n$/);
      expect(published.stderr).not.toMatch(ANSI);
      expect(published.stderr).toContain('Created project Releases');
      const shareToken = published.stdout.trim().split('/share/')[1]!;
      const shared = await fetch(`${server.url}/api/share/${shareToken}`);
      expect(Buffer.from(await shared.arrayBuffer())).toEqual(await readFile(master));

      const again = await ci.band([...args, '--share', '--json']);
      expect(again.exitCode).toBe(0);
      const link = JSON.parse(again.stdout) as ShareLink;
      // The link the first run made, now without an expiry as this run asked (the later of the two).
      expect(link).toEqual({ token: shareToken, shareUrl: published.stdout.trim(), expiresAt: null });

      const asFile = JSON.parse((await ci.band([...args, '--json'])).stdout) as FileRecord;
      const projects = await apiGet<{ id: string; name: string }[]>(server.url, '/api/projects', token);
      const releases = await apiGet<ProjectDetail>(server.url, `/api/projects/${projects.find((p) => p.name === 'Releases')!.id}`, token);
      expect(releases.vibes).toHaveLength(1);
      expect(releases.vibes[0]!.cuts).toHaveLength(1);
      // Analysis and preview run on in the background: their states may have moved since the upload answered.
      expect(releases.vibes[0]!.cuts[0]!.files).toContainEqual({ ...asFile, analysis: expect.stringMatching(/^(pending|failed)$/), preview: expect.anything() });
      await expect(stat(path.join(ci.home, '.config/band/credentials'))).rejects.toThrow();
    } finally {
      await ci.cleanup();
    }
  });

  it('lets parallel runs publish to one new vibe and cut: the runs that lose the race to create them use the winner\'s', async () => {
    const ci = await cliUser(server.url, { CI: 'true', BAND_EMAIL: 'ana@example.com', BAND_PASSWORD: 'correct horse battery' });
    try {
      await ci.band(['project', 'create', 'Parallel']);
      const runs = await Promise.all(
        [1, 2, 3, 4].map(async (n) => {
          const stem = path.join(work, `parallel-${n}.wav`);
          await writeFile(stem, wavBytes(n, 10_000));
          return ci.band(['publish', stem, '--project', 'Parallel', '--vibe', 'Nightly', '--cut', 'Build 42', '--create']);
        }),
      );
      expect(runs.map((run) => [run.exitCode, run.stderr.includes('error')])).toEqual(Array(4).fill([0, false]));
      const projects = await apiGet<{ id: string; name: string }[]>(server.url, '/api/projects', token);
      const parallel = await apiGet<ProjectDetail>(server.url, `/api/projects/${projects.find((p) => p.name === 'Parallel')!.id}`, token);
      expect(parallel.vibes.map((vibe) => [vibe.name, vibe.cuts.map((cut) => [cut.name, cut.files.length])])).toEqual([['Nightly', [['Build 42', 4]]]]);
    } finally {
      await ci.cleanup();
    }
  });
});
