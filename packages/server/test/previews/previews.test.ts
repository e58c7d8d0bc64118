// Previews end to end (§20): an upload gets a preview after its analysis, served to members and link holders
// (ranges, audio/mp4), 409 while pending, `preview.ready`, counted in storage statistics, gone with its file,
// backfilled by the server command; stream-only links refuse the original and the archive; plays and downloads
// are counted per link.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FileRecord } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../authz/fixture.js';
import { openEventSocket } from '../support/event-socket.js';
import { analysed, previewed, upload, userWithCut } from '../support/files.js';
import { call, client } from '../support/http.js';
import { runServerCommand } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ebur128, generate, hasFfmpeg } from '../analysis/ffmpeg.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-preview-api-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const MUSIC = 'aevalsrc=0.3*sin(2*PI*997*t)+0.1*sin(2*PI*211*t)|0.25*sin(2*PI*997*t)+0.1*sin(2*PI*3001*t)';

function fixture(name: string, seconds: number, options: string[]): string {
  const file = path.join(dir, name);
  generate(MUSIC, seconds, options, file);
  return file;
}

async function bytesOf(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const response = await fetch(url, { headers });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe.skipIf(!hasFfmpeg)('previews through the API', () => {
  let server: TestServer;
  let api: Api;
  let owner: Awaited<ReturnType<typeof userWithCut>>;
  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    owner = await userWithCut(api);
  });
  afterAll(() => server?.close());

  it('makes a preview after the analysis: File.preview, preview.ready, GET with ranges as audio/mp4 that ffmpeg reads as the original', async () => {
    const file = fixture('mix.wav', 6, ['-ar', '96000', '-c:a', 'pcm_s24le']);
    const socket = await openEventSocket(server.url, { token: owner.token });
    try {
      const created = await upload(api, owner.token, owner.cutId, 'mix.wav', await readFile(file));
      expect(created.status).toBe(201);
      expect(created.body.preview).toEqual({ status: 'pending', url: null, bitrate: null, bytes: null, durationMs: null });
      const id = created.body.id as string;
      const event = await socket.waitFor((e) => e.type === 'preview.ready', 90_000);
      expect(event).toMatchObject({ projectId: owner.projectId, actor: { id: owner.user.user.id }, data: { fileId: id, cutId: owner.cutId, preview: { status: 'done' } } });
      const record = (await api.request<FileRecord>('GET', `/api/files/${id}`, { token: owner.token })).body;
      expect(record.preview).toMatchObject({ status: 'done', url: `/api/files/${id}/preview`, bitrate: 256000, durationMs: 6000 });
      expect(event.data).toMatchObject({ preview: record.preview });

      const whole = await bytesOf(`${server.url}${record.preview.url}`, { authorization: `Bearer ${owner.token}` });
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-type')).toBe('audio/mp4');
      expect(whole.headers.get('accept-ranges')).toBe('bytes');
      expect(whole.bytes.length).toBe(record.preview.bytes);
      const stored = path.join(dir, 'served.m4a');
      await writeFile(stored, whole.bytes);
      const probed = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', stored], { encoding: 'utf8' })).streams[0];
      expect(probed).toMatchObject({ codec_name: 'aac', sample_rate: '48000', channels: 2 });
      expect(Math.abs(Number(probed.duration) - 6)).toBeLessThan(0.05);
      const [want, got] = [ebur128(file), ebur128(stored)];
      expect(Math.abs(got.integratedLufs - want.integratedLufs)).toBeLessThan(0.3);

      const part = await bytesOf(`${server.url}${record.preview.url}`, { authorization: `Bearer ${owner.token}`, range: 'bytes=100-199' });
      expect(part.status).toBe(206);
      expect(part.bytes.equals(whole.bytes.subarray(100, 200))).toBe(true);
      // Not a member: as if there were no such file.
      const stranger = await api.register();
      expect((await call(server.url, 'GET', record.preview.url!, { token: stranger.accessToken })).status).toBe(404);
    } finally {
      socket.close();
    }
  });

  it('counts previews in storage statistics (not in the quota) and removes the preview with its file', async () => {
    const user = await userWithCut(api);
    const created = await upload(api, user.token, user.cutId, 'take.flac', await readFile(fixture('take.flac', 3, ['-ar', '44100', '-c:a', 'flac'])));
    const id = created.body.id as string;
    const record = await previewed(api, user.token, id);
    expect(record.preview.status).toBe('done');
    const stats = (await api.request('GET', '/api/files/storage', { token: user.token })).body;
    expect(stats.breakdown.previews).toEqual({ size: record.preview.bytes, count: 1 });
    expect(stats.totalSize).toBe(record.size + record.preview.bytes!);
    expect(await server.stored.exists(`previews/${id}.m4a`)).toBe(true);
    expect((await api.request('DELETE', `/api/files/${id}`, { token: user.token })).status).toBe(200);
    expect(await server.stored.exists(`previews/${id}.m4a`)).toBe(false);
  });

  it('a file whose audio cannot be decoded gets a failed preview (404), an image none', async () => {
    const user = await userWithCut(api);
    const broken = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(2000, 3)]);
    const created = await upload(api, user.token, user.cutId, 'broken.wav', broken);
    const record = await previewed(api, user.token, created.body.id);
    expect(record.preview).toEqual({ status: 'failed', url: null, bitrate: null, bytes: null, durationMs: null });
    expect((await api.request('GET', `/api/files/${record.id}/preview`, { token: user.token })).status).toBe(404);
  });

  it('share links serve the preview and count plays; a stream-only link refuses the original and the archive', async () => {
    const user = await userWithCut(api);
    const created = await upload(api, user.token, user.cutId, 'song.wav', await readFile(fixture('song.wav', 3, ['-ar', '48000', '-c:a', 'pcm_s16le'])));
    const id = created.body.id as string;
    await previewed(api, user.token, id);

    const open = (await api.request('POST', `/api/files/${id}/share`, { token: user.token, json: {} })).body;
    const streamOnly = (await api.request('POST', `/api/files/${id}/share`, { token: user.token, json: { download: false } })).body;
    const described = (await api.request('GET', `/api/share/${streamOnly.token}`, { headers: { accept: 'application/json' } })).body;
    expect(described).toMatchObject({ kind: 'file', download: false, downloadUrl: null, previewUrl: `${server.config.publicUrl}/api/share/${streamOnly.token}/preview` });
    expect((await api.request('GET', `/api/share/${open.token}`, { headers: { accept: 'application/json' } })).body).toMatchObject({ download: true });

    const refused = await api.request('GET', `/api/share/${streamOnly.token}?download=1`);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('DOWNLOAD_DISABLED');
    expect((await api.request('GET', `/api/share/${streamOnly.token}`)).status).toBe(403);
    const preview = await bytesOf(`${server.url}/api/share/${streamOnly.token}/preview`, { 'user-agent': 'phone A' });
    expect(preview.status).toBe(200);
    expect(preview.headers.get('content-type')).toBe('audio/mp4');
    // The same client again, and a seek: no new play. Another client: a play.
    await bytesOf(`${server.url}/api/share/${streamOnly.token}/preview`, { 'user-agent': 'phone A' });
    await bytesOf(`${server.url}/api/share/${streamOnly.token}/preview`, { 'user-agent': 'phone B', range: 'bytes=1000-' });
    await bytesOf(`${server.url}/api/share/${streamOnly.token}/preview`, { 'user-agent': 'phone B', range: 'bytes=0-' });
    expect((await bytesOf(`${server.url}/api/share/${open.token}?download=1`)).status).toBe(200);

    const links = (await api.request('GET', `/api/files/${id}/shares`, { token: user.token })).body as { download: boolean; plays: number; downloads: number }[];
    expect(links.map(({ download, plays, downloads }) => ({ download, plays, downloads }))).toEqual([
      { download: true, plays: 0, downloads: 1 },
      { download: false, plays: 2, downloads: 0 },
    ]);

    const cutLink = (await api.request('POST', `/api/cuts/${user.cutId}/share`, { token: user.token, json: { download: false } })).body;
    const cut = (await api.request('GET', `/api/share/${cutLink.token}`, { headers: { accept: 'application/json' } })).body;
    expect(cut).toMatchObject({ kind: 'cut', download: false, archiveUrl: null });
    expect(cut.files[0]).toMatchObject({ downloadUrl: null, previewUrl: `${server.config.publicUrl}/api/share/${cutLink.token}/files/${id}/preview` });
    expect((await api.request('GET', `/api/share/${cutLink.token}/archive`)).body.code).toBe('DOWNLOAD_DISABLED');
    expect((await api.request('GET', `/api/share/${cutLink.token}/files/${id}`)).body.code).toBe('DOWNLOAD_DISABLED');
    expect((await bytesOf(`${server.url}/api/share/${cutLink.token}/files/${id}/preview`)).status).toBe(200);
  });
});

describe.skipIf(!hasFfmpeg)('previews stored before: pending, and the backfill command', () => {
  let server: TestServer;
  let api: Api;
  beforeAll(async () => {
    // No preview worker on this instance: previews stay pending until the command and a worker meet.
    server = await startTestServer({ JOBS_CONCURRENCY_PREVIEW: '0' });
    api = client(server.url);
  });
  afterAll(() => server?.close());

  it('answers 409 PREVIEW_NOT_READY with Retry-After while pending, and the backfill queues what has no job', async () => {
    const user = await userWithCut(api);
    const created = await upload(api, user.token, user.cutId, 'old.wav', await readFile(fixture('old.wav', 2, ['-ar', '44100', '-c:a', 'pcm_s16le'])));
    const id = created.body.id as string;
    await analysed(api, user.token, id);
    const pending = await api.request('GET', `/api/files/${id}/preview`, { token: user.token });
    expect(pending.status).toBe(409);
    expect(pending.body.code).toBe('PREVIEW_NOT_READY');
    expect(Number(pending.headers.get('retry-after'))).toBeGreaterThan(0);
    // As if stored before previews existed: pending, and no job.
    await server.sql`delete from jobs where kind = 'preview'`;
    const first = await runServerCommand(['previews', 'backfill'], server.env);
    expect(first).toMatchObject({ code: 0, stdout: '1 preview queued\n' });
    // Run again (resumed): what is queued is skipped.
    expect(await runServerCommand(['previews', 'backfill'], server.env)).toMatchObject({ code: 0, stdout: '0 previews queued\n' });
    const [job] = await server.sql<{ payload: { fileId: string } }[]>`select payload from jobs where kind = 'preview' and state = 'queued'`;
    expect(job!.payload.fileId).toBe(id);
  });
});
