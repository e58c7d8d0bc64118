import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { openBlobStore } from '../src/core/store/index.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { runServerCommand } from './support/process.js';
import { s3TestEnv } from './support/s3.js';
import { createTestDatabase, startTestServer, type TestServer } from './support/server.js';

// `backup` of a server on S3 holds the database and a manifest of the objects' keys and sha256, not the objects
// (the bucket keeps them, with its own durability); `restore` refuses unless every listed object is in the bucket.
const sha256 = (bytes: Buffer | Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let server: TestServer;
let scratch: string;
let owner: Awaited<ReturnType<typeof userWithCut>>;
const objects: { key: string; size: number; sha256: string; path: string }[] = [];

beforeAll(async () => {
  server = await startTestServer(await s3TestEnv());
  scratch = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-backup-s3-'));
  const api = client(server.url);
  owner = await userWithCut(api);
  for (const [name, bytes] of [['take.wav', sampleBytes('wav', 6 * 1024 * 1024 + 7)], ['mix.mp3', sampleBytes('mp3', 70_000)]] as const) {
    const uploaded = await upload(api, owner.token, owner.cutId, name, bytes);
    expect(uploaded.status).toBe(201);
    const extension = name.split('.')[1];
    objects.push({ key: `files/${uploaded.body.id}.${extension}`, size: bytes.length, sha256: sha256(bytes), path: `/api/files/${uploaded.body.id}/download` });
  }
  const cover = sampleBytes('png', 30_000);
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(cover)]), 'cover.png');
  const vibe = await api.request('PUT', `/api/vibes/${owner.vibeId}`, { token: owner.token, body: form });
  expect(vibe.status).toBe(200);
  objects.push({ key: `images/${path.basename(vibe.body.imageUrl)}`, size: cover.length, sha256: sha256(cover), path: vibe.body.imageUrl });
});
afterAll(async () => {
  await server?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('backup and restore on S3', () => {
  it('backs up the database and the objects\' keys with sha256; restore on the same bucket serves every object', async () => {
    const backup = path.join(scratch, 'whole');
    const made = await runServerCommand(['backup', backup], server.env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/: \d+ tables, \d+ rows, 3 stored object\(s\) in bucket t-[0-9a-f]+ \(listed, not copied\), 6\.1 MiB \(6391463 bytes\)\n$/);
    expect((await readdir(backup)).sort()).toEqual(['database', 'manifest.json']);
    const manifest = JSON.parse(await readFile(path.join(backup, 'manifest.json'), 'utf8'));
    expect(manifest.files).toEqual([]);
    const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);
    expect([...manifest.objects].sort(byKey)).toEqual(objects.map(({ key, size, sha256 }) => ({ key, size, sha256 })).sort(byKey));

    const target = { ...server.env, DATA_DIR: path.join(scratch, 'restored'), DATABASE_URL: await createTestDatabase() };
    const restored = await runServerCommand(['restore', backup], target);
    expect(restored.code, restored.stderr).toBe(0);
    const again = await startTestServer(target);
    try {
      for (const object of objects) {
        const response = await fetch(`${again.url}${object.path}`, { headers: { authorization: `Bearer ${owner.token}` } });
        expect(response.status).toBe(200);
        expect(sha256(Buffer.from(await response.arrayBuffer()))).toBe(object.sha256);
      }
    } finally {
      await again.close();
    }
  });

  it('refuses to restore when a listed object is not in the bucket, or onto the local directory, and loads no row', async () => {
    const backup = path.join(scratch, 'then-lost');
    expect((await runServerCommand(['backup', backup], server.env)).code).toBe(0);

    const onDisk = { ...server.env, STORAGE: 'fs', DATA_DIR: path.join(scratch, 'on-disk'), DATABASE_URL: await createTestDatabase() };
    const refusedOnDisk = await runServerCommand(['restore', backup], onDisk);
    expect(refusedOnDisk.code).toBe(1);
    expect(refusedOnDisk.stderr).toContain('restore refused: the backup lists objects in a bucket');

    const api = client(server.url);
    const lost = await upload(api, owner.token, owner.cutId, 'lost.wav', sampleBytes('wav', 1000));
    expect(lost.status).toBe(201);
    const later = path.join(scratch, 'with-lost');
    expect((await runServerCommand(['backup', later], server.env)).code).toBe(0);
    const bucket = await openBlobStore(loadConfig(server.env));
    try {
      await bucket.delete(`files/${lost.body.id}.wav`);
    } finally {
      bucket.close();
    }
    const databaseUrl = await createTestDatabase();
    const refused = await runServerCommand(['restore', later], { ...server.env, DATA_DIR: path.join(scratch, 'refused'), DATABASE_URL: databaseUrl });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`restore refused: 1 object(s) the backup lists are not in the bucket: files/${lost.body.id}.wav`);
    const again = await startTestServer({ ...server.env, DATA_DIR: path.join(scratch, 'refused'), DATABASE_URL: databaseUrl });
    try {
      expect((await again.sql`select count(*)::int as n from users`)[0]!.n).toBe(0);
    } finally {
      await again.close();
    }
  });
});
