// Previews and stream-only links from the command line (§20): `band file preview`, the PREVIEW column of
// `band file versions`, `band pull --previews`, `band file share --no-download` and `band share list`'s plays.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { FileRecord } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generate, hasFfmpeg } from '../../server/test/analysis/ffmpeg.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { apiGet, type CliUser, cliUser, registerWithCli } from './support/cli.js';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
let ana: CliUser;
let token: string;
let work: string;

beforeAll(async () => {
  if (!hasFfmpeg) return;
  server = await startTestServer();
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com');
  token = (await ana.band(['auth', 'token'])).stdout.trim();
  work = await mkdtemp(path.join(os.tmpdir(), 'band-previews-'));
  await ana.band(['project', 'create', 'Album']);
  await ana.band(['vibe', 'create', 'Single', '--project', 'Album']);
});
afterAll(async () => {
  await ana?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

const where = ['--cut', 'Mix', '--vibe', 'Single', '--project', 'Album'];

async function previewed(id: string): Promise<FileRecord> {
  for (const until = Date.now() + 90_000; ; ) {
    const file = await apiGet<FileRecord>(server.url, `/api/files/${id}`, token);
    if (file.preview.status !== 'pending') return file;
    if (Date.now() > until) throw new Error(`preview of ${id} still pending`);
    await delay(100);
  }
}

describe.skipIf(!hasFfmpeg)('previews from the command line', () => {
  it('saves a preview, shows it in the versions, pulls previews to a folder and lists stream-only links with their plays', async () => {
    expect((await ana.band(['cut', 'create', 'Mix', '--vibe', 'Single', '--project', 'Album'])).exitCode).toBe(0);
    const mix = path.join(work, 'mix.wav');
    generate('aevalsrc=0.3*sin(2*PI*440*t)|0.3*sin(2*PI*660*t)', 3, ['-ar', '48000', '-c:a', 'pcm_s24le'], mix);
    const uploaded = await ana.band(['file', 'upload', mix, ...where, '--json']);
    expect(uploaded.exitCode, uploaded.stderr).toBe(0);
    const file = await previewed((JSON.parse(uploaded.stdout) as FileRecord[])[0]!.id);
    expect(file.preview.status).toBe('done');

    const versions = await ana.band(['file', 'versions', 'mix.wav', ...where]);
    expect(versions.stdout).toMatch(/PREVIEW/);
    expect(versions.stdout).toMatch(/done \(\d/);

    const out = path.join(work, 'listen.m4a');
    const saved = await ana.band(['file', 'preview', 'mix.wav', ...where, '-o', out]);
    expect(saved.exitCode, saved.stderr).toBe(0);
    expect(saved.stdout).toContain(`Saved the preview of mix.wav to ${out}`);
    const probed = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', out], { encoding: 'utf8' })).streams[0];
    expect(probed).toMatchObject({ codec_name: 'aac', channels: 2, sample_rate: '48000' });
    expect((await ana.band(['file', 'preview', 'mix.wav', ...where, '-o', out])).exitCode).toBe(2);

    const road = path.join(work, 'road');
    const pulled = await ana.band(['pull', `Album/Single/Mix`, road, '--previews']);
    expect(pulled.exitCode, pulled.stderr).toBe(0);
    expect((await stat(path.join(road, 'mix.m4a'))).size).toBe(file.preview.bytes);
    const again = await ana.band(['pull', `Album/Single/Mix`, road, '--previews']);
    expect(again.stdout).toContain('Fetched 0 previews; 1 already there');

    const shared = await ana.band(['file', 'share', 'mix.wav', ...where, '--no-download', '--json']);
    expect(shared.exitCode, shared.stderr).toBe(0);
    const { token: linkToken } = JSON.parse(shared.stdout) as { token: string };
    expect((await fetch(`${server.url}/api/share/${linkToken}?download=1`)).status).toBe(403);
    expect((await fetch(`${server.url}/api/share/${linkToken}/preview`)).status).toBe(200);
    const links = await ana.band(['share', 'list', '--file', 'mix.wav', ...where]);
    expect(links.stdout).toMatch(/DOWNLOAD +PLAYS +DOWNLOADS/);
    expect(links.stdout).toMatch(/stream only +1 +0 /);
  });
});
