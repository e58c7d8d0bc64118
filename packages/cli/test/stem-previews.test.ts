// `band file preview <zip> --entry <path|index>` (§20, the server's PREVIEW_STEMS=true): a STEM entry's preview
// saved by path or index, as ffprobe reads it; an entry without one and one the ZIP lacks are told plainly.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FileRecord } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hasFfmpeg } from '../../server/test/analysis/ffmpeg.js';
import { probe } from '../../server/test/previews/fidelity.js';
import { stemZip } from '../../server/test/previews/stem-zip.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { until } from '../../server/test/support/until.js';
import { apiGet, type CliUser, cliUser, registerWithCli } from './support/cli.js';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
let ana: CliUser;
let work: string;

beforeAll(async () => {
  if (!hasFfmpeg) return;
  server = await startTestServer({ PREVIEW_STEMS: 'true' });
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com');
  work = await mkdtemp(path.join(os.tmpdir(), 'band-stem-previews-'));
  await ana.band(['project', 'create', 'Album']);
  await ana.band(['vibe', 'create', 'Single', '--project', 'Album']);
  await ana.band(['cut', 'create', 'Stems', '--vibe', 'Single', '--project', 'Album']);
});
afterAll(async () => {
  await ana?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

const where = ['--cut', 'Stems', '--vibe', 'Single', '--project', 'Album'];

describe.skipIf(!hasFfmpeg)('entry previews from the command line', () => {
  it('saves an entry preview by its path or its index; refuses an entry without one, or one the ZIP lacks', async () => {
    const zip = path.join(work, 'session.zip');
    await writeFile(zip, await stemZip(work));
    const uploaded = await ana.band(['file', 'upload', zip, ...where, '--json']);
    expect(uploaded.exitCode, uploaded.stderr).toBe(0);
    const id = (JSON.parse(uploaded.stdout) as FileRecord[])[0]!.id;
    const token = (await ana.band(['auth', 'token'])).stdout.trim();
    await until(
      'the entry previews',
      async () => (await apiGet<FileRecord>(server.url, `/api/files/${id}`, token)).stems?.entries.every((entry) => entry.preview?.status !== 'pending'),
      90_000,
    );

    const byPath = path.join(work, 'overheads.m4a');
    const saved = await ana.band(['file', 'preview', 'session.zip', ...where, '--entry', 'stems/overheads-96k.wav', '-o', byPath]);
    expect(saved.exitCode, saved.stderr).toBe(0);
    expect(saved.stdout).toContain(`Saved the preview of overheads-96k.wav to ${byPath}`);
    expect(probe(byPath).stream).toMatchObject({ codec_name: 'aac', sample_rate: '48000', channels: 2 });
    // By index, into a directory: the entry's own name.
    const byIndex = await ana.band(['file', 'preview', 'session.zip', ...where, '--entry', '2', '-o', `${work}/`]);
    expect(byIndex.exitCode, byIndex.stderr).toBe(0);
    expect(probe(path.join(work, 'room-5.1.m4a')).stream).toMatchObject({ codec_name: 'aac', channels: 2 });

    const text = await ana.band(['file', 'preview', 'session.zip', ...where, '--entry', 'notes.txt']);
    expect(text.exitCode).toBe(6);
    expect(text.stderr).toContain('notes.txt has no preview');
    expect((await ana.band(['file', 'preview', 'session.zip', ...where, '--entry', '7'])).exitCode).toBe(6);
  });
});
