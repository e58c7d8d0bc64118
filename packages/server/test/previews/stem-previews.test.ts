// Previews of a STEM ZIP's audio entries (§20, PREVIEW_STEMS=true): made by the file's preview job after the
// ZIP's analysis, read back by ffprobe (codec, rate, channels, duration within 50 ms, the index before the audio),
// served with ranges at GET /api/files/:id/entries/:index/preview, counted in storage statistics, gone with the
// file's purge, carried by backups and migrate-storage; with the setting off none is made, and the backfill
// command queues them later.
import { createHash } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FileRecord, StemEntriesPage } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../authz/fixture.js';
import { hasFfmpeg } from '../analysis/ffmpeg.js';
import { analysed, upload, userWithCut } from '../support/files.js';
import { runServerCommand } from '../support/process.js';
import { s3TestEnv } from '../support/s3.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { client } from '../support/http.js';
import { until } from '../support/until.js';
import { durationSeconds, probe, topLevelBoxes } from './fidelity.js';
import { AUDIO, stemZip } from './stem-zip.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let dir: string;
let zip: Buffer;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-stem-previews-'));
  if (hasFfmpeg) zip = await stemZip(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The record once no entry's preview is pending. */
function entriesPreviewed(api: Api, token: string, id: string): Promise<FileRecord> {
  return until(
    `the previews of ${id}'s entries`,
    async () => {
      const { body } = await api.request<FileRecord>('GET', `/api/files/${id}`, { token });
      return body.stems !== null && body.stems.entries.every((entry) => entry.preview?.status !== 'pending') && body;
    },
    120_000,
  );
}

describe.skipIf(!hasFfmpeg)('previews of STEM entries (PREVIEW_STEMS=true)', () => {
  let server: TestServer;
  let api: Api;
  beforeAll(async () => {
    server = await startTestServer({ PREVIEW_STEMS: 'true' });
    api = client(server.url);
  });
  afterAll(() => server?.close());

  it("makes each audio entry's preview, as ffprobe reads it: AAC-LC at 48 kHz, stereo, the original's duration, faststart", async () => {
    const user = await userWithCut(api);
    const created = await upload(api, user.token, user.cutId, 'session.zip', zip);
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const record = await entriesPreviewed(api, user.token, id);
    expect(record.preview.status).toBe('none');
    expect(record.stems!.entries.map((entry) => [entry.path, entry.preview?.status ?? null])).toEqual([
      ['notes.txt', null],
      ['stems/overheads-96k.wav', 'done'],
      ['stems/room-5.1.wav', 'done'],
    ]);
    // The entries' pages say the same as the record's copy.
    const page = (await api.request<StemEntriesPage>('GET', `/api/files/${id}/entries`, { token: user.token })).body;
    expect(page.entries.map((entry) => entry.preview)).toEqual(record.stems!.entries.map((entry) => entry.preview));

    for (const entry of AUDIO) {
      const preview = record.stems!.entries[entry.index]!.preview!;
      expect(preview).toMatchObject({ status: 'done', url: `/api/files/${id}/entries/${entry.index}/preview`, bitrate: 256000, durationMs: entry.seconds * 1000 });
      const response = await fetch(`${server.url}${preview.url}`, { headers: { authorization: `Bearer ${user.token}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('audio/mp4');
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(bytes.length).toBe(preview.bytes);
      const served = path.join(dir, `served-${entry.index}.m4a`);
      await writeFile(served, bytes);
      const { format, stream } = probe(served);
      expect(format.format_name).toContain('mp4');
      expect(stream).toMatchObject({ codec_name: 'aac', profile: 'LC', sample_rate: '48000', channels: 2 });
      expect(Math.abs(durationSeconds(served) - durationSeconds(path.join(dir, path.basename(entry.path))))).toBeLessThan(0.05);
      const boxes = await topLevelBoxes(served);
      expect(boxes.indexOf('moov')).toBeGreaterThanOrEqual(0);
      expect(boxes.indexOf('moov')).toBeLessThan(boxes.indexOf('mdat'));
      const part = await fetch(`${server.url}${preview.url}`, { headers: { authorization: `Bearer ${user.token}`, range: 'bytes=10-19' } });
      expect(part.status).toBe(206);
      expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);
    }
    // No preview for an entry that is not audio, nor for one the ZIP does not have.
    for (const index of ['0', '3', 'x']) expect((await api.request('GET', `/api/files/${id}/entries/${index}/preview`, { token: user.token })).status).toBe(404);
    const stranger = await api.register();
    expect((await api.request('GET', `/api/files/${id}/entries/1/preview`, { token: stranger.accessToken })).status).toBe(404);
  });

  it('counts entry previews in storage statistics and removes them with the file when the trash is purged', async () => {
    const user = await userWithCut(api);
    const id = (await upload(api, user.token, user.cutId, 'session.zip', zip)).body.id as string;
    const record = await entriesPreviewed(api, user.token, id);
    const bytes = AUDIO.map((entry) => record.stems!.entries[entry.index]!.preview!.bytes!);
    const stats = (await api.request('GET', '/api/files/storage', { token: user.token })).body;
    expect(stats.breakdown.previews).toEqual({ size: bytes[0]! + bytes[1]!, count: 2 });
    expect(stats.totalSize).toBe(record.size + bytes[0]! + bytes[1]!);
    const keys = AUDIO.map((entry) => `previews/${id}.${entry.index}.m4a`);
    for (const key of keys) expect(await server.stored.exists(key)).toBe(true);

    expect((await api.request('DELETE', `/api/files/${id}`, { token: user.token })).status).toBe(200);
    for (const key of keys) expect(await server.stored.exists(key)).toBe(true);
    expect((await api.request('DELETE', `/api/trash/file/${id}`, { token: user.token })).status).toBe(202);
    await until('the entry previews removed', async () => !(await server.stored.exists(keys[0]!)) && !(await server.stored.exists(keys[1]!)));
    expect((await api.request('GET', '/api/files/storage', { token: user.token })).body.breakdown.previews).toEqual({ size: 0, count: 0 });
  });

  it('backup carries the entry previews and restore serves them; one the backup lacks is made again; migrate-storage copies them', async () => {
    const user = await userWithCut(api);
    const id = (await upload(api, user.token, user.cutId, 'session.zip', zip)).body.id as string;
    const record = await entriesPreviewed(api, user.token, id);
    const fetchEntryPreview = async (base: string, index: number) => {
      const response = await fetch(`${base}/api/files/${id}/entries/${index}/preview`, { headers: { authorization: `Bearer ${user.token}` } });
      return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
    };
    const made = await Promise.all(AUDIO.map(async (entry) => (await fetchEntryPreview(server.url, entry.index)).bytes));
    const keys = AUDIO.map((entry) => `previews/${id}.${entry.index}.m4a`);

    // Run as root, the embedded PostgreSQL of a restored DATA_DIR runs as "postgres", which must pass through.
    await chmod(dir, 0o711);
    const backup = path.join(dir, 'backup');
    const taken = await runServerCommand(['backup', backup], server.env);
    expect(taken.code, taken.stderr).toBe(0);
    const manifestPath = path.join(backup, 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { files: { path: string; size: number; sha256: string }[] };
    AUDIO.forEach((_, i) => expect(manifest.files).toContainEqual({ path: keys[i], size: made[i]!.length, sha256: sha256(made[i]!) }));

    const whole = { ...server.env, DATA_DIR: path.join(dir, 'restored'), DATABASE_URL: await createTestDatabase() };
    const restored = await runServerCommand(['restore', backup], whole);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).not.toContain('made again');
    const onRestored = await startTestServer(whole);
    try {
      for (const [i, entry] of AUDIO.entries()) expect(await fetchEntryPreview(onRestored.url, entry.index)).toEqual({ status: 200, bytes: made[i] });
      const again = (await client(onRestored.url).request<FileRecord>('GET', `/api/files/${id}`, { token: user.token })).body;
      expect(again.stems!.entries).toEqual(record.stems!.entries);
    } finally {
      await onRestored.close();
    }

    // A backup without the first entry's preview: that entry is restored pending, and the restored server makes it.
    manifest.files = manifest.files.filter((file) => file.path !== keys[0]);
    await writeFile(manifestPath, JSON.stringify(manifest));
    await unlink(path.join(backup, keys[0]!));
    const lacking = { ...server.env, DATA_DIR: path.join(dir, 'restored-lacking'), DATABASE_URL: await createTestDatabase() };
    const partial = await runServerCommand(['restore', backup], lacking);
    expect(partial.code, partial.stderr).toBe(0);
    expect(partial.stdout).toContain('1 preview(s) the backup does not carry are queued to be made again');
    const onPartial = await startTestServer(lacking);
    try {
      const remade = await entriesPreviewed(client(onPartial.url), user.token, id);
      expect(remade.stems!.entries.map((entry) => entry.preview?.status ?? null)).toEqual([null, 'done', 'done']);
      const served = await fetchEntryPreview(onPartial.url, AUDIO[0].index);
      expect(served.status).toBe(200);
      expect(served.bytes.length).toBe(remade.stems!.entries[AUDIO[0].index]!.preview!.bytes);
      expect(await fetchEntryPreview(onPartial.url, AUDIO[1].index)).toEqual({ status: 200, bytes: made[1] });
    } finally {
      await onPartial.close();
    }

    const s3 = await s3TestEnv();
    const migrated = await runServerCommand(['migrate-storage', '--to', 's3'], { ...server.env, ...s3 });
    expect(migrated.code, migrated.stderr).toBe(0);
    for (const key of keys) expect(migrated.stdout).toContain(`copied\t${key}\n`);
    const onS3 = await startTestServer({ ...s3, PREVIEW_STEMS: 'true', DATABASE_URL: server.config.databaseUrl! });
    try {
      for (const [i, entry] of AUDIO.entries()) expect(await fetchEntryPreview(onS3.url, entry.index)).toEqual({ status: 200, bytes: made[i] });
    } finally {
      await onS3.close();
    }
  });
});

describe.skipIf(!hasFfmpeg)('previews of STEM entries with PREVIEW_STEMS off, and the backfill', () => {
  let server: TestServer;
  let api: Api;
  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
  });
  afterAll(() => server?.close());

  it('makes none (every entry preview null, nothing stored, no job), and the backfill with the setting on queues them', async () => {
    const user = await userWithCut(api);
    const id = (await upload(api, user.token, user.cutId, 'session.zip', zip)).body.id as string;
    const record = await analysed(api, user.token, id);
    expect(record.analysis).toBe('done');
    expect(record.stems!.entries.map((entry) => entry.preview)).toEqual([null, null, null]);
    expect(await server.sql`select 1 from jobs where kind = 'preview' and payload ->> 'fileId' = ${id}`).toHaveLength(0);
    for (const entry of AUDIO) expect(await server.stored.exists(`previews/${id}.${entry.index}.m4a`)).toBe(false);
    expect((await api.request('GET', `/api/files/${id}/entries/1/preview`, { token: user.token })).status).toBe(404);

    expect(await runServerCommand(['previews', 'backfill'], server.env)).toMatchObject({ code: 0, stdout: '0 previews queued\n' });
    expect(await runServerCommand(['previews', 'backfill'], { ...server.env, PREVIEW_STEMS: 'true' })).toMatchObject({ code: 0, stdout: '2 previews queued\n' });
    // This server's preview worker makes what was queued.
    const made = await entriesPreviewed(api, user.token, id);
    expect(made.stems!.entries.map((entry) => entry.preview?.status ?? null)).toEqual([null, 'done', 'done']);
    expect(await server.stored.exists(`previews/${id}.1.m4a`)).toBe(true);
  });
});
