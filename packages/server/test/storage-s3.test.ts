import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { openBlobStore } from '../src/core/store/index.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { s3TestEnv } from './support/s3.js';
import { startTestServer, type TestServer } from './support/server.js';

// Two server instances on one database and one bucket (fauxqs on loopback), each with a DATA_DIR of its own:
// what one stores the other serves, and a resumable upload goes on wherever its next PATCH lands.
const MiB = 1024 * 1024;
const TUS = { 'tus-resumable': '1.0.0' };
const sha256 = (bytes: Buffer | Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let a: TestServer;
let b: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  // Deletes for good: these tests follow a delete's objects in the bucket (the trash keeps them, trash.test.ts).
  env = { ...(await s3TestEnv()), S3_PART_SIZE_MB: '5', TRASH_RETENTION_DAYS: '0' };
  a = await startTestServer(env);
  b = await startTestServer({ ...env, DATABASE_URL: a.config.databaseUrl! });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

async function download(server: TestServer, token: string, fileId: string, range?: string): Promise<{ status: number; bytes: Buffer }> {
  const response = await fetch(`${server.url}/api/files/${fileId}/download`, { headers: { authorization: `Bearer ${token}`, ...(range ? { range } : {}) } });
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('STORAGE=s3 with two instances', () => {
  it('serves from B what was uploaded to A (whole and ranged), and B deletes the object', async () => {
    const owner = await userWithCut(client(a.url));
    const bytes = sampleBytes('wav', 11 * MiB + 321);
    const uploaded = await upload(client(a.url), owner.token, owner.cutId, 'take.wav', bytes);
    expect(uploaded.status).toBe(201);
    expect(uploaded.body.sha256).toBe(sha256(bytes));
    const whole = await download(b, owner.token, uploaded.body.id);
    expect(whole.status).toBe(200);
    expect(sha256(whole.bytes)).toBe(sha256(bytes));
    const ranged = await download(b, owner.token, uploaded.body.id, 'bytes=5242870-5242899');
    expect(ranged.status).toBe(206);
    expect(ranged.bytes).toEqual(bytes.subarray(5_242_870, 5_242_900));

    const store = await openBlobStore(loadConfig({ DATA_DIR: a.dataDir, ...env }));
    try {
      const key = `files/${uploaded.body.id}.wav`;
      expect(await store.head(key)).toMatchObject({ size: bytes.length });
      expect((await client(b.url).request('DELETE', `/api/files/${uploaded.body.id}`, { token: owner.token })).status).toBe(200);
      expect(await store.head(key)).toBeNull();
    } finally {
      store.close();
    }
  });

  it('continues on B a resumable upload begun on A, over several parts, byte-identical', async () => {
    const owner = await userWithCut(client(a.url));
    const bytes = sampleBytes('zip', 12 * MiB + 5);
    const metadata = `cutId ${Buffer.from(owner.cutId).toString('base64')},filename ${Buffer.from('stems.zip').toString('base64')}`;
    const created = await client(a.url).request('POST', '/api/uploads', {
      token: owner.token,
      headers: { ...TUS, 'upload-length': String(bytes.length), 'upload-metadata': metadata },
    });
    expect(created.status).toBe(201);
    const url = created.headers.get('location')!;
    // A: one part and a tail; B: the tail grows into the second part; A: the rest, which completes it.
    const cuts = [0, 7 * MiB, 10 * MiB + 1, bytes.length];
    let last;
    for (let i = 0; i < 3; i++) {
      const server = i === 1 ? b : a;
      last = await client(server.url).request('PATCH', url, {
        token: owner.token,
        body: new Uint8Array(bytes.subarray(cuts[i], cuts[i + 1])),
        headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(cuts[i]) },
      });
      expect(last.status).toBe(204);
      expect(last.headers.get('upload-offset')).toBe(String(cuts[i + 1]));
    }
    const fileId = last!.headers.get('band-file-id')!;
    const file = await client(b.url).request('GET', `/api/files/${fileId}`, { token: owner.token });
    expect(file.body.sha256).toBe(sha256(bytes));
    expect(sha256((await download(b, owner.token, fileId)).bytes)).toBe(sha256(bytes));
  });

  it('terminating an upload on B aborts the multipart upload A began: nothing stays recorded', async () => {
    const owner = await userWithCut(client(a.url));
    const bytes = sampleBytes('zip', 6 * MiB);
    const metadata = `cutId ${Buffer.from(owner.cutId).toString('base64')},filename ${Buffer.from('gone.zip').toString('base64')}`;
    const created = await client(a.url).request('POST', '/api/uploads', {
      token: owner.token,
      headers: { ...TUS, 'upload-length': String(bytes.length + 1), 'upload-metadata': metadata },
    });
    const url = created.headers.get('location')!;
    const patched = await client(a.url).request('PATCH', url, {
      token: owner.token,
      body: new Uint8Array(bytes),
      headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
    });
    expect(patched.status).toBe(204);
    expect(await a.sql`select 1 from resumable_uploads where multipart_id is not null and completed_at is null`).toHaveLength(1);
    expect((await client(b.url).request('DELETE', url, { token: owner.token, headers: TUS })).status).toBe(204);
    expect(await a.sql`select 1 from abandoned_multipart_uploads`).toHaveLength(0);
  });
});
