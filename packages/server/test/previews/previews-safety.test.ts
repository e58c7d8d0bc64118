// Previews and the operator's commands (§20): `migrate-storage --to s3` copies them (verified like files),
// `backup` carries them and `restore` puts them back (a preview a backup does not carry is made again),
// `orphans` lists a preview without a file and never a live one, and a preview whose bytes are gone from the
// store answers 409 PREVIEW_NOT_READY and is made again.
import { createHash, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FileRecord } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../authz/fixture.js';
import { previewed, upload, userWithCut } from '../support/files.js';
import { client } from '../support/http.js';
import { runServerCommand } from '../support/process.js';
import { s3TestEnv } from '../support/s3.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { generate, hasFfmpeg } from '../analysis/ffmpeg.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const TWO_DAYS_AGO = new Date(Date.now() - 2 * 24 * 3600 * 1000);

let scratch: string;
let server: TestServer;
let api: Api;
let owner: Awaited<ReturnType<typeof userWithCut>>;
let fileId: string;
/** The preview as the server first served it. */
let previewBytes: Buffer;

async function fetchPreview(base: string, id: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const response = await fetch(`${base}/api/files/${id}/preview`, { headers: { authorization: `Bearer ${owner.token}` } });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe.skipIf(!hasFfmpeg)('previews and the storage commands', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-preview-safety-'));
    // Run as root, the embedded PostgreSQL of a restored DATA_DIR runs as "postgres", which must pass through.
    await chmod(scratch, 0o711);
    server = await startTestServer({ STORAGE: 'fs' });
    api = client(server.url);
    owner = await userWithCut(api);
    const wav = path.join(scratch, 'mix.wav');
    generate('aevalsrc=0.3*sin(2*PI*440*t)|0.2*sin(2*PI*660*t)', 3, ['-ar', '48000', '-c:a', 'pcm_s24le'], wav);
    const created = await upload(api, owner.token, owner.cutId, 'mix.wav', await readFile(wav));
    expect(created.status).toBe(201);
    fileId = created.body.id as string;
    expect((await previewed(api, owner.token, fileId)).preview.status).toBe('done');
    const served = await fetchPreview(server.url, fileId);
    expect(served.status).toBe(200);
    previewBytes = served.bytes;
  });
  afterAll(async () => {
    await server?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('orphans lists a preview whose file is gone, never a live one, and --move sets it aside under orphans/previews/', async () => {
    const live = path.join(server.dataDir, 'previews', `${fileId}.m4a`);
    const strayId = randomUUID();
    const stray = path.join(server.dataDir, 'previews', `${strayId}.m4a`);
    await writeFile(stray, Buffer.alloc(1234, 1));
    // Both unchanged for two days: only the stray has no file.
    await utimes(stray, TWO_DAYS_AGO, TWO_DAYS_AGO);
    await utimes(live, TWO_DAYS_AGO, TWO_DAYS_AGO);

    const listed = await runServerCommand(['orphans'], server.env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toBe(`1234\tpreviews/${strayId}.m4a\n`);

    const moved = await runServerCommand(['orphans', '--move'], server.env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toMatch(/^moved 1 file\(s\), 1234 bytes/);
    expect((await stat(path.join(server.dataDir, 'orphans', 'previews', `${strayId}.m4a`))).size).toBe(1234);
    await expect(stat(stray)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(live)).size).toBe(previewBytes.length);
    expect((await fetchPreview(server.url, fileId)).status).toBe(200);

    // The one set aside is listed (and purged) as what orphans/ holds; the live preview stays.
    const purged = await runServerCommand(['orphans', '--purge'], server.env);
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toMatch(/^deleted 1 file\(s\), 1234 bytes/);
    expect((await fetchPreview(server.url, fileId)).bytes.equals(previewBytes)).toBe(true);
  });

  it('backup carries the previews and restore puts them back; a preview the backup lacks is queued and made again', async () => {
    const backup = path.join(scratch, 'backup');
    const made = await runServerCommand(['backup', backup], server.env);
    expect(made.code, made.stderr).toBe(0);
    const manifestPath = path.join(backup, 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { files: { path: string; size: number; sha256: string }[] };
    expect(manifest.files).toContainEqual({ path: `previews/${fileId}.m4a`, size: previewBytes.length, sha256: sha256(previewBytes) });

    const whole = { ...server.env, DATA_DIR: path.join(scratch, 'restored'), DATABASE_URL: await createTestDatabase() };
    const restored = await runServerCommand(['restore', backup], whole);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).not.toContain('made again');
    const onRestored = await startTestServer(whole);
    try {
      const record = (await api.request<FileRecord>('GET', `/api/files/${fileId}`, { token: owner.token })).body;
      const again = await fetchPreview(onRestored.url, fileId);
      expect(again.status).toBe(200);
      expect(again.bytes.equals(previewBytes)).toBe(true);
      expect((await client(onRestored.url).request<FileRecord>('GET', `/api/files/${fileId}`, { token: owner.token })).body.preview).toEqual(record.preview);
    } finally {
      await onRestored.close();
    }

    // A backup without the preview (as one made before backups carried them): restored `pending`, its job
    // queued, and the restored server makes it.
    manifest.files = manifest.files.filter((file) => !file.path.startsWith('previews/'));
    await writeFile(manifestPath, JSON.stringify(manifest));
    await unlink(path.join(backup, 'previews', `${fileId}.m4a`));
    const lacking = { ...server.env, DATA_DIR: path.join(scratch, 'restored-lacking'), DATABASE_URL: await createTestDatabase() };
    const partial = await runServerCommand(['restore', backup], lacking);
    expect(partial.code, partial.stderr).toBe(0);
    expect(partial.stdout).toContain('1 preview(s) the backup does not carry are queued to be made again');
    const onPartial = await startTestServer(lacking);
    try {
      const partialApi = client(onPartial.url);
      // Made again after the analysis (its index sized from the measured duration, so not byte for byte the same).
      const record = await previewed(partialApi, owner.token, fileId);
      expect(record.preview).toMatchObject({ status: 'done', durationMs: 3000 });
      const remade = await fetchPreview(onPartial.url, fileId);
      expect(remade.status).toBe(200);
      expect(remade.bytes.length).toBe(record.preview.bytes);
    } finally {
      await onPartial.close();
    }
  });

  it('migrate-storage --to s3 copies the previews, verified, and a STORAGE=s3 server serves them', async () => {
    const s3 = await s3TestEnv();
    const run = await runServerCommand(['migrate-storage', '--to', 's3'], { ...server.env, ...s3 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`copied\tpreviews/${fileId}.m4a\n`);
    const again = await runServerCommand(['migrate-storage', '--to', 's3'], { ...server.env, ...s3 });
    expect(again.stdout).toContain(`present\tpreviews/${fileId}.m4a\n`);

    const onS3 = await startTestServer({ ...s3, DATABASE_URL: server.config.databaseUrl! });
    try {
      const served = await fetchPreview(onS3.url, fileId);
      expect(served.status).toBe(200);
      expect(served.bytes.equals(previewBytes)).toBe(true);
    } finally {
      await onS3.close();
    }
  });

  it('a preview whose bytes are gone from the store answers 409 PREVIEW_NOT_READY with Retry-After, and is made again', async () => {
    await unlink(path.join(server.dataDir, 'previews', `${fileId}.m4a`));
    const gone = await fetchPreview(server.url, fileId);
    expect(gone.status).toBe(409);
    expect(gone.headers.get('retry-after')).toBe('5');
    expect(JSON.parse(gone.bytes.toString('utf8'))).toMatchObject({ code: 'PREVIEW_NOT_READY' });
    const record = await previewed(api, owner.token, fileId);
    expect(record.preview).toMatchObject({ status: 'done', durationMs: 3000 });
    const remade = await fetchPreview(server.url, fileId);
    expect(remade.status).toBe(200);
    expect(remade.bytes.length).toBe(record.preview.bytes);
  });
});
