// A WAV or AIFF's preview starts with its upload, beside its analysis, its index sized from the header's bound
// on the frames (§20 "after upload"): with no analysis running at all (JOBS_CONCURRENCY_ANALYSIS=0) it is made
// all the same, and matches the original; a compressed file, whose header bounds nothing, waits for its analysis.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FileRecord } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../authz/fixture.js';
import { previewed, upload, userWithCut } from '../support/files.js';
import { client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { generate, hasFfmpeg } from '../analysis/ffmpeg.js';

describe.skipIf(!hasFfmpeg)('previews started beside the analysis', () => {
  let dir: string;
  let server: TestServer;
  let api: Api;
  let owner: Awaited<ReturnType<typeof userWithCut>>;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-preview-early-'));
    server = await startTestServer({ JOBS_CONCURRENCY_ANALYSIS: '0' });
    api = client(server.url);
    owner = await userWithCut(api);
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['mix.wav', ['-ar', '96000', '-c:a', 'pcm_s24le'], 48000],
    ['mix.aiff', ['-ar', '44100', '-c:a', 'pcm_s16be'], 44100],
  ])('makes the preview of %s while its analysis has not run, its duration the original\'s', async (name, options, rate) => {
    const file = path.join(dir, name);
    generate('aevalsrc=0.3*sin(2*PI*440*t)|0.2*sin(2*PI*660*t)', 7, options, file);
    const created = await upload(api, owner.token, owner.cutId, name, await readFile(file));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const record = await previewed(api, owner.token, id);
    expect(record.analysis).toBe('pending');
    expect(record.preview).toMatchObject({ status: 'done', durationMs: 7000, bitrate: 256000 });
    const response = await fetch(`${server.url}/api/files/${id}/preview`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(response.status).toBe(200);
    const stored = path.join(dir, `${name}.m4a`);
    await writeFile(stored, Buffer.from(await response.arrayBuffer()));
    const probed = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', stored], { encoding: 'utf8' }));
    expect(probed.streams[0]).toMatchObject({ codec_name: 'aac', sample_rate: String(rate), channels: 2 });
    expect(Math.abs(Number(probed.streams[0].duration) - 7)).toBeLessThan(0.05);
    // The index comes first (faststart), within the first 512 KiB.
    const head = (await readFile(stored)).subarray(0, 512 * 1024);
    expect(head.indexOf('moov')).toBeGreaterThan(0);
    expect(head.indexOf('moov')).toBeLessThan(head.indexOf('mdat'));
  });

  it('leaves a compressed file\'s preview pending until its analysis is done', async () => {
    const file = path.join(dir, 'mix.flac');
    generate('aevalsrc=0.3*sin(2*PI*440*t)', 3, ['-ar', '48000', '-c:a', 'flac'], file);
    const created = await upload(api, owner.token, owner.cutId, 'mix.flac', await readFile(file));
    const id = created.body.id as string;
    const jobs = await server.sql<{ key: string }[]>`select key from jobs where kind = 'preview' and payload ->> 'fileId' = ${id}`;
    expect(jobs).toEqual([]);
    const record = (await api.request<FileRecord>('GET', `/api/files/${id}`, { token: owner.token })).body;
    expect(record.preview.status).toBe('pending');
  });
});
