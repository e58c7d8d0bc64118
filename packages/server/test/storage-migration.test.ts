import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { openBlobStore } from '../src/core/store/index.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { runServerCommand, SERVER_BIN, serverEnvironment } from './support/process.js';
import { s3TestEnv } from './support/s3.js';
import { startTestServer, type TestServer } from './support/server.js';

// `migrate-storage --to s3` beside a running server on the local directory: killed midway, run again, then a
// server with STORAGE=s3 on the same database serves every stored byte from the bucket.
const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer | Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let server: TestServer;
let owner: Awaited<ReturnType<typeof userWithCut>>;
/** Every stored object the database refers to: the path a signed-in member GETs it from, and its bytes' sha256. */
const stored: { path: string; sha256: string }[] = [];

beforeAll(async () => {
  server = await startTestServer({ STORAGE: 'fs' });
  const api = client(server.url);
  owner = await userWithCut(api);
  for (let i = 0; i < 6; i++) {
    const bytes = sampleBytes('wav', 3 * MiB + i);
    const uploaded = await upload(api, owner.token, owner.cutId, `take ${i}.wav`, bytes);
    expect(uploaded.status).toBe(201);
    stored.push({ path: `/api/files/${uploaded.body.id}/download`, sha256: sha256(bytes) });
  }
  const image = (bytes: Buffer) => {
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(bytes)]), 'picture.png');
    return form;
  };
  const cover = sampleBytes('png', 40_000);
  const vibe = await api.request('PUT', `/api/vibes/${owner.vibeId}`, { token: owner.token, body: image(cover) });
  expect(vibe.status).toBe(200);
  stored.push({ path: vibe.body.imageUrl, sha256: sha256(cover) });
  const face = sampleBytes('png', 20_000);
  const avatar = await api.request('PUT', '/api/auth/me/avatar', { token: owner.token, body: image(face) });
  expect(avatar.status).toBe(200);
  stored.push({ path: avatar.body.avatarUrl, sha256: sha256(face) });
});
afterAll(() => server?.close());

async function hashesIn(dataDir: string): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  for (const kind of ['files', 'images']) {
    for (const name of await readdir(path.join(dataDir, kind))) hashes[`${kind}/${name}`] = sha256(await readFile(path.join(dataDir, kind, name)));
  }
  return hashes;
}

/** Starts the command and kills it (SIGKILL) once it has reported its first copied object. */
async function killedAfterFirstCopy(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [SERVER_BIN, 'migrate-storage', '--to', 's3'], {
    env: serverEnvironment({ ...server.env, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    if (stdout.includes('copied\t')) child.kill('SIGKILL');
  });
  expect(await exited, stderr).toBe('SIGKILL');
  return stdout;
}

const outcomes = (stdout: string) => stdout.trim().split('\n').map((line) => line.split('\t')[0]);

describe('migrate-storage --to s3', () => {
  it('copies every stored object, resumes after kill -9, and a STORAGE=s3 server on the same database serves them all', async () => {
    const s3 = await s3TestEnv();
    const before = await hashesIn(server.dataDir);

    const first = await killedAfterFirstCopy(s3);
    expect(outcomes(first).filter((outcome) => outcome === 'copied').length).toBeLessThan(stored.length);

    const resumed = await runServerCommand(['migrate-storage', '--to', 's3'], { ...server.env, ...s3 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = outcomes(resumed.stdout);
    expect(done).toHaveLength(stored.length);
    expect(done.filter((outcome) => outcome === 'present').length).toBeGreaterThanOrEqual(1);
    expect(done.filter((outcome) => outcome === 'copied').length).toBeGreaterThanOrEqual(1);
    expect(done.every((outcome) => outcome === 'copied' || outcome === 'present')).toBe(true);
    expect(resumed.stderr).toContain(`${stored.length} of ${stored.length} stored object(s) in bucket ${s3.S3_BUCKET}`);

    const again = await runServerCommand(['migrate-storage', '--to', 's3'], { ...server.env, ...s3 });
    expect(again.code, again.stderr).toBe(0);
    expect(outcomes(again.stdout)).toEqual(stored.map(() => 'present'));

    // Nothing the running server serves was touched.
    expect(await hashesIn(server.dataDir)).toEqual(before);
    const served = await fetch(`${server.url}${stored[0]!.path}`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(sha256(Buffer.from(await served.arrayBuffer()))).toBe(stored[0]!.sha256);

    const onS3 = await startTestServer({ ...s3, DATABASE_URL: server.config.databaseUrl! });
    try {
      for (const object of stored) {
        const response = await fetch(`${onS3.url}${object.path}`, { headers: { authorization: `Bearer ${owner.token}` } });
        expect(response.status, object.path).toBe(200);
        expect(sha256(Buffer.from(await response.arrayBuffer())), object.path).toBe(object.sha256);
      }
    } finally {
      await onS3.close();
    }
  });

  it('says "no such bucket" for a bucket that does not exist, and exits 1 having written nothing', async () => {
    const s3 = await s3TestEnv();
    const run = await runServerCommand(['migrate-storage', '--to', 's3'], { ...server.env, ...s3, S3_BUCKET: 'no-such-bucket-here' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`no such bucket: no-such-bucket-here at ${s3.S3_ENDPOINT} (create it, or set S3_BUCKET to one that exists)`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stdout).toBe('');
  });

  it('copies nothing whose local bytes do not hash to the database\'s sha256, and exits 1', async () => {
    const bytes = sampleBytes('wav', 100_000);
    const uploaded = await upload(client(server.url), owner.token, owner.cutId, 'damaged.wav', bytes);
    expect(uploaded.status).toBe(201);
    const key = `files/${uploaded.body.id}.wav`;
    const damaged = Buffer.from(bytes);
    damaged[50_000] = damaged[50_000]! ^ 0xff;
    await writeFile(path.join(server.dataDir, key), damaged);

    const s3 = await s3TestEnv();
    const run = await runServerCommand(['migrate-storage', '--to', 's3'], { ...server.env, ...s3 });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`mismatched\t${key}\n`);
    expect(run.stderr).toContain('1 not matching their sha256');
    const bucket = await openBlobStore(loadConfig({ DATA_DIR: server.dataDir, ...s3 }));
    try {
      expect(await bucket.head(key)).toBeNull();
      expect(await bucket.head(`files/${stored[0]!.path.split('/')[3]}.wav`)).not.toBeNull();
    } finally {
      bucket.close();
    }
  });

  it('is refused without STORAGE=s3', async () => {
    const refused = await runServerCommand(['migrate-storage', '--to', 's3'], server.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('run it with STORAGE=s3');
  });
});
