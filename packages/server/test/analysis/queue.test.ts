// The analysis queue end to end: uploads feed it, the worker stores AudioInfo, stems and peaks, the API
// serves them, and the queue is shared (two instances on one database analyse each file once). That a killed
// server's job completes after a restart is a long run of its own: reliability-analysis-kill.test.ts.
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { FileRecord } from '@bandcollab/sdk';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Api, PNG_BYTES } from '../authz/fixture.js';
import { openEventSocket } from '../support/event-socket.js';
import { analysed, upload, userWithCut } from '../support/files.js';
import { client } from '../support/http.js';
import { ownStorage } from '../support/s3.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { storedObjectsOf } from '../support/stored.js';
import { ebur128, ffprobeStream, generate, hasFfmpeg } from './ffmpeg.js';
import { writeZip } from './zip.js';
import { until } from '../support/until.js';

const PINK = 'anoisesrc=color=pink:amplitude=0.25';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-queue-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function fixture(name: string, seconds: number, options: string[], source = `${PINK}:sample_rate=48000`): string {
  const file = path.join(dir, name);
  generate(source, seconds, options, file);
  return file;
}

async function zipOf(name: string, files: Record<string, string>): Promise<Buffer> {
  const zipPath = path.join(dir, name);
  await writeZip(zipPath, files);
  return readFile(zipPath);
}

describe.skipIf(!hasFfmpeg)('analysis of uploads', () => {
  let server: TestServer;
  let api: Api;
  let owner: Awaited<ReturnType<typeof userWithCut>>;
  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    owner = await userWithCut(api);
  });
  afterAll(() => server?.close());

  it('analyses an uploaded CUT: AudioInfo agrees with ffmpeg, peaks are served to members and share links, file.analyzed is published', async () => {
    const file = fixture('mix.flac', 6, ['-c:a', 'flac', '-sample_fmt', 's16', '-ac', '2']);
    const socket = await openEventSocket(server.url, { token: owner.token });
    try {
      const created = await upload(api, owner.token, owner.cutId, 'mix.flac', await readFile(file));
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ analysis: 'pending', audio: null, stems: null });
      const id = created.body.id as string;

      const event = await socket.waitFor((e) => e.type === 'file.analyzed', 60_000);
      expect(event).toMatchObject({ projectId: owner.projectId, actor: { id: owner.user.user.id }, data: { fileId: id, cutId: owner.cutId, analysis: 'done' } });

      const record = (await api.request<FileRecord>('GET', `/api/files/${id}`, { token: owner.token })).body;
      const oracle = ebur128(file);
      expect(record).toMatchObject({
        analysis: 'done',
        stems: null,
        audio: { codec: 'flac', durationMs: 6000, sampleRate: 48000, bitDepth: 16, channels: 2, peaksUrl: `/api/files/${id}/peaks` },
      });
      expect(Math.abs(record.audio!.loudness.integratedLufs! - oracle.integratedLufs)).toBeLessThanOrEqual(0.1);
      expect(Math.abs(record.audio!.loudness.truePeakDbtp! - oracle.truePeakDbtp)).toBeLessThanOrEqual(0.2);

      const peaks = await api.request('GET', record.audio!.peaksUrl, { token: owner.token });
      expect(peaks.status).toBe(200);
      expect(peaks.body).toMatchObject({ version: 2, channels: 1, sample_rate: 48000, bits: 8 });
      expect(peaks.body.length).toBeGreaterThanOrEqual(1000);
      expect(peaks.body.length).toBeLessThanOrEqual(2000);
      expect(peaks.body.data).toHaveLength(peaks.body.length * 2);

      const stranger = await api.register();
      expect((await api.request('GET', record.audio!.peaksUrl, { token: stranger.accessToken })).status).toBe(404);

      const link = await api.request('POST', `/api/files/${id}/share`, { token: owner.token, json: {} });
      const shared = await api.request('GET', `/api/share/${link.body.token}/peaks`);
      expect(shared.status).toBe(200);
      expect(shared.body).toEqual(peaks.body);
    } finally {
      socket.close();
    }
  });

  it('lists the entries of a STEM ZIP and flags a 44.1 kHz stem among 48 kHz ones as inconsistent', async () => {
    const wav = ['-c:a', 'pcm_s24le', '-ac', '2'];
    const zip = await zipOf('stems.zip', {
      'drums.wav': fixture('drums.wav', 3, wav),
      'bass.wav': fixture('bass.wav', 3, wav),
      'keys.wav': fixture('keys.wav', 3, wav),
      'vox.wav': fixture('vox.wav', 3, wav, `${PINK}:sample_rate=44100`),
    });
    const created = await upload(api, owner.token, owner.cutId, 'stems.zip', zip);
    expect(created.status).toBe(201);
    const record = await analysed(api, owner.token, created.body.id);
    expect(record.analysis).toBe('done');
    expect(record.audio).toBeNull();
    expect(record.stems!.entries.map((entry) => entry.path).sort()).toEqual(['bass.wav', 'drums.wav', 'keys.wav', 'vox.wav']);
    expect(record.stems!.summary).toMatchObject({ entryCount: 4, audioCount: 4, sampleRates: [44100, 48000], bitDepths: [24], consistent: false });
    // A ZIP has no waveform.
    expect((await api.request('GET', `/api/files/${record.id}/peaks`, { token: owner.token })).status).toBe(404);
  });

  it.each([
    ['a truncated FLAC', 'broken.flac', async (file: string) => truncate(file, Math.floor((await stat(file)).size * 0.6)), ['-c:a', 'flac']],
    ['a WAV whose header announces more audio than it holds', 'lying.wav', (file: string) => truncate(file, 100_000), ['-c:a', 'pcm_s16le']],
  ] as const)('marks %s failed, without a waveform, and still serves its bytes', async (_label, name, spoil, options) => {
    const file = fixture(name, 4, [...options]);
    await spoil(file);
    const bytes = await readFile(file);
    const created = await upload(api, owner.token, owner.cutId, name, bytes);
    expect(created.status).toBe(201);
    const record = await analysed(api, owner.token, created.body.id);
    expect(record).toMatchObject({ analysis: 'failed', audio: null, stems: null });
    expect((await api.request('GET', `/api/files/${record.id}/peaks`, { token: owner.token })).status).toBe(404);
    const download = await fetch(`${server.url}/api/files/${record.id}/download`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('takes RF64 by multipart and BW64 by tus, analyses both as ffprobe reads them, and exports markers into them', async () => {
    const rf64 = fixture('long.wav', 3, ['-c:a', 'pcm_s24le', '-ac', '2', '-rf64', 'always']);
    const rf64Bytes = await readFile(rf64);
    expect(rf64Bytes.toString('latin1', 0, 4)).toBe('RF64');
    const bw64 = path.join(dir, 'long-bw64.wav');
    await writeFile(bw64, Buffer.concat([Buffer.from('BW64', 'latin1'), rf64Bytes.subarray(4)]));

    const byMultipart = await upload(api, owner.token, owner.cutId, 'long.wav', rf64Bytes);
    expect(byMultipart.status).toBe(201);
    expect(byMultipart.body.mimeType).toBe('audio/wav');
    const bw64Bytes = await readFile(bw64);
    const tus = { 'tus-resumable': '1.0.0' };
    const metadata = `cutId ${Buffer.from(owner.cutId).toString('base64')},filename ${Buffer.from('long bw64.wav').toString('base64')}`;
    const created = await api.request('POST', '/api/uploads', { token: owner.token, headers: { ...tus, 'upload-length': String(bw64Bytes.length), 'upload-metadata': metadata } });
    expect(created.status).toBe(201);
    const patched = await api.request('PATCH', created.headers.get('location')!, {
      token: owner.token,
      body: new Uint8Array(bw64Bytes),
      headers: { ...tus, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
    });
    expect(patched.status).toBe(204);
    const byTus = patched.headers.get('band-file-id')!;

    const probed = ffprobeStream(rf64);
    for (const [id, file] of [[byMultipart.body.id as string, rf64], [byTus, bw64]] as const) {
      expect(ffprobeStream(file)).toEqual(probed);
      const record = await analysed(api, owner.token, id);
      expect(record).toMatchObject({
        analysis: 'done',
        audio: { codec: 'pcm', sampleRate: Number(probed.sample_rate), channels: probed.channels, bitDepth: probed.bits_per_sample, durationMs: 3000 },
      });
      await api.request('POST', `/api/files/${id}/comments`, { token: owner.token, json: { body: 'here', atMs: 1500 } });
      const exported = await fetch(`${server.url}/api/files/${id}/comments/export?format=wav`, { headers: { authorization: `Bearer ${owner.token}` } });
      expect(exported.status).toBe(200);
      const out = path.join(dir, `exported-${id}.wav`);
      await writeFile(out, Buffer.from(await exported.arrayBuffer()));
      expect(ffprobeStream(out)).toEqual(probed);
    }
  });

  it('never analyses images', async () => {
    const created = await upload(api, owner.token, owner.cutId, 'cover.png', PNG_BYTES);
    expect(created.body).toMatchObject({ analysis: 'unsupported', audio: null, stems: null });
    expect((await server.sql`select count(*)::int as n from jobs where kind = 'analysis' and payload->>'fileId' = ${created.body.id}`)[0]!.n).toBe(0);
    expect((await api.request('GET', `/api/files/${created.body.id}/peaks`, { token: owner.token })).status).toBe(404);
  });
});

describe.skipIf(!hasFfmpeg)('the queue', () => {
  it('answers 409 ANALYSIS_PENDING for peaks while no instance has analysed the file (ANALYSIS_CONCURRENCY=0)', async () => {
    const server = await startTestServer({ ANALYSIS_CONCURRENCY: '0' });
    try {
      const api = client(server.url);
      const owner = await userWithCut(api);
      const created = await upload(api, owner.token, owner.cutId, 'take.wav', await readFile(fixture('pending.wav', 1, ['-c:a', 'pcm_s16le'])));
      expect((await api.request('GET', `/api/files/${created.body.id}`, { token: owner.token })).body.analysis).toBe('pending');
      // Queued and taken by nobody: with no analysis on this instance, nothing will take it.
      expect(await server.sql`select payload->>'fileId' as file_id, state from jobs where kind = 'analysis'`).toEqual([{ file_id: created.body.id, state: 'queued' }]);
      const peaks = await api.request('GET', `/api/files/${created.body.id}/peaks`, { token: owner.token });
      expect(peaks.status).toBe(409);
      expect(peaks.body.code).toBe('ANALYSIS_PENDING');
    } finally {
      await server.close();
    }
  });

  it('analyses each file once when two instances share one database', async () => {
    const first = await startTestServer();
    const second = await startTestServer({ DATABASE_URL: first.env.DATABASE_URL!, DATA_DIR: first.dataDir });
    try {
      const api = client(first.url);
      const owner = await userWithCut(api);
      const socket = await openEventSocket(second.url, { token: owner.token });
      const bytes = await readFile(fixture('short.wav', 2, ['-c:a', 'pcm_s16le']));
      const ids: string[] = [];
      for (let i = 0; i < 8; i += 1) ids.push((await upload(api, owner.token, owner.cutId, `take${i}.wav`, bytes)).body.id);
      for (const id of ids) await socket.waitFor((e) => e.type === 'file.analyzed' && e.data.fileId === id, 60_000);
      expect(await first.sql`select payload->>'fileId' as file_id from jobs where kind = 'analysis' and state in ('queued', 'running')`).toEqual([]);
      // A second analysis of a file took its job before the queue emptied, so it runs in a transaction begun
      // before now; once none is left, any second event is published, and a later one arrives after it.
      const [emptied] = await first.sql<{ at: Date }[]>`select now() as at`;
      await vi.waitFor(
        async () => {
          const [open] = await first.sql<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity where datname = current_database() and xact_start < ${emptied!.at}`;
          expect(open!.n).toBe(0);
        },
        { timeout: 60_000, interval: 50 },
      );
      const sentinel = (await upload(api, owner.token, owner.cutId, 'sentinel.png', PNG_BYTES)).body.id;
      await socket.waitFor((e) => e.type === 'file.uploaded' && e.data.file.id === sentinel);
      const analysedIds = socket.events.filter((e) => e.type === 'file.analyzed').map((e) => (e.data as { fileId: string }).fileId);
      expect(analysedIds.sort()).toEqual([...ids].sort());
      socket.close();
    } finally {
      await second.close();
      await first.close();
    }
  });

  it('backfills the files stored before migration 015: their CUT is analysed at the next start, the image is not', async () => {
    const databaseUrl = await createTestDatabase();
    const dataDir = await mkdtemp(path.join(dir, 'data-'));
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
    const storage = await ownStorage();
    const planted = await storedObjectsOf({ ...storage, DATA_DIR: dataDir });
    const wavId = randomUUID();
    const pngId = randomUUID();
    try {
      // The database as the migrations before 015 leave it, with a WAV and a PNG stored on a cut.
      const migrations = fileURLToPath(new URL('../../migrations', import.meta.url));
      await sql`create table schema_migrations (version text primary key, applied_at timestamptz not null default now())`;
      for (const file of (await readdir(migrations)).filter((f) => /^\d{3}_.+\.sql$/.test(f) && f < '015').sort()) {
        await sql.unsafe(await readFile(path.join(migrations, file), 'utf8'));
        await sql`insert into schema_migrations (version) values (${file})`;
      }
      const [user] = await sql`insert into users (email, name, role) values ('old@example.com', 'Old', 'ADMIN') returning id`;
      const [project] = await sql`insert into projects (name) values ('Old') returning id`;
      const [vibe] = await sql`insert into vibes (project_id, name, position) values (${project!.id}, 'Old', 0) returning id`;
      const [cut] = await sql`insert into cuts (vibe_id, project_id, name) values (${vibe!.id}, ${project!.id}, 'Old') returning id`;
      const stored = [
        { id: wavId, extension: 'wav', type: 'CUT', mime: 'audio/wav', bytes: await readFile(fixture('old.wav', 1, ['-c:a', 'pcm_s16le'])) },
        { id: pngId, extension: 'png', type: 'IMAGE', mime: 'image/png', bytes: PNG_BYTES },
      ];
      for (const file of stored) {
        await planted.write(`files/${file.id}.${file.extension}`, file.bytes);
        await sql`
          insert into files (id, cut_id, project_id, name, extension, type, size, mime_type, sha256, uploaded_by)
          values (${file.id}, ${cut!.id}, ${project!.id}, 'old', ${file.extension}, ${file.type}, ${file.bytes.length}, ${file.mime},
                  ${createHash('sha256').update(file.bytes).digest('hex')}, ${user!.id})`;
      }
    } finally {
      await sql.end({ timeout: 1 });
      planted.close();
    }

    const server = await startTestServer({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, ...storage });
    try {
      const deadline = Date.now() + 30_000;
      while ((await server.sql`select analysis from files where id = ${wavId}`)[0]!.analysis === 'pending') {
        if (Date.now() > deadline) throw new Error('the backfilled WAV was not analysed');
        await delay(100);
      }
      const rows = await server.sql`select id, analysis, audio from files order by type`;
      expect(rows).toEqual([
        { id: wavId, analysis: 'done', audio: expect.objectContaining({ codec: 'pcm', durationMs: 1000 }) },
        { id: pngId, analysis: 'unsupported', audio: null },
      ]);
      // The job is marked done once its handler has returned, just after the analysis it stored.
      await until('no analysis job left queued or running', async () => (await server.sql`select 1 from jobs where kind = 'analysis' and state in ('queued', 'running')`).length === 0);
    } finally {
      await server.close();
    }
  });
});
