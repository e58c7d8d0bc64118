import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleBytes, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { type ServerEnv, type ServerProcess, spawnServer } from './support/process.js';
import { sleep, whenClosed } from './support/raw-http.js';
import { createTestDatabase, startTestServer } from './support/server.js';
import { openPatch, patchRunning, TUS } from './support/tus.js';

// `kill -9` of the built server in the middle of a resumable upload's PATCH, then a restart on the same
// DATA_DIR and database: the upload resumes where its last answered PATCH left it and completes to a
// byte-identical file with the right sha256. And a shutdown cutting a PATCH: 503, the bytes kept.

const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let dataDir: string;
let env: ServerEnv;
let server: ServerProcess | null = null;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-tus-crash-'));
  env = { DATA_DIR: dataDir, DATABASE_URL: await createTestDatabase(), JWT_SECRET: 'tus-crash-secret-tus-crash-secret-0123456789' };
});
afterAll(async () => {
  if (server?.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  await rm(dataDir, { recursive: true, force: true });
});

it('resumes an upload after the server is killed mid-PATCH and restarted, to a byte-identical file', async () => {
  server = await spawnServer(env);
  let api = client(server.url);
  const owner = await userWithCut(api);
  const bytes = sampleBytes('zip', 8 * MiB);
  const created = await api.request('POST', '/api/uploads', {
    token: owner.token,
    headers: {
      ...TUS,
      'upload-length': String(bytes.length),
      'upload-metadata': `cutId ${btoa(owner.cutId)},filename ${btoa('stems.zip')}`,
    },
  });
  expect(created.status).toBe(201);
  const url = created.headers.get('location')!;
  const patch = (offset: number, body: Buffer) =>
    api.request('PATCH', url, {
      token: owner.token,
      body: new Uint8Array(body),
      headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
    });
  expect((await patch(0, bytes.subarray(0, 3 * MiB))).status).toBe(204);

  // The next PATCH announces the rest, sends 2 MiB of it and hangs: the server is killed while it reads.
  const socket = await openPatch(server.url, owner.token, url, 3 * MiB, 5 * MiB, bytes.subarray(3 * MiB, 5 * MiB));
  socket.on('error', () => undefined);
  // Killed while the PATCH runs: it holds the upload's lock.
  await untilPatchRuns(env.DATABASE_URL!, url);
  server.child.kill('SIGKILL');
  await server.exited;
  socket.destroy();

  server = await spawnServer(env);
  api = client(server.url);
  const status = await api.request('HEAD', url, { token: owner.token, headers: TUS });
  expect(status.status).toBe(200);
  // The answered PATCH survived; the cut-off one's bytes were never acknowledged (its process died with them).
  const offset = Number(status.headers.get('upload-offset'));
  expect(offset).toBe(3 * MiB);

  const rest = await patch(offset, bytes.subarray(offset));
  expect(rest.status).toBe(204);
  const fileId = rest.headers.get('band-file-id')!;
  const file = (await api.request('GET', `/api/files/${fileId}`, { token: owner.token })).body;
  expect(file.sha256).toBe(sha256(bytes));
  const stored = Buffer.from(await (await fetch(`${server.url}/api/files/${fileId}/download`, { headers: { authorization: `Bearer ${owner.token}` } })).arrayBuffer());
  expect(stored.equals(bytes)).toBe(true);
});

it('keeps what a PATCH sent when a shutdown cuts it (503), for the restarted server to resume', async () => {
  const shared = { DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'bandcollab-tus-shutdown-')), DATABASE_URL: await createTestDatabase() };
  let running = await startTestServer({ ...shared, SHUTDOWN_GRACE_SECONDS: '0' });
  try {
    const api = client(running.url);
    const owner = await userWithCut(api);
    const bytes = sampleBytes('zip', 4 * MiB);
    const created = await api.request('POST', '/api/uploads', {
      token: owner.token,
      headers: { ...TUS, 'upload-length': String(bytes.length), 'upload-metadata': `cutId ${btoa(owner.cutId)},filename ${btoa('set.zip')}` },
    });
    const url = created.headers.get('location')!;
    const socket = await openPatch(running.url, owner.token, url, 0, bytes.length, bytes.subarray(0, MiB));
    const answer = whenClosed(socket);
    await untilPatchRuns(shared.DATABASE_URL, url);
    await running.close();
    expect(await answer).toMatch(/^HTTP\/1\.1 503[\s\S]*the bytes received so far are kept/);

    running = await startTestServer({ ...shared });
    const again = client(running.url);
    const status = await again.request('HEAD', url, { token: owner.token, headers: TUS });
    // What the server had taken of the first MiB when the shutdown cut it (recorded in PostgreSQL).
    const kept = Number(status.headers.get('upload-offset'));
    expect(kept).toBeLessThanOrEqual(MiB);
    const rest = await again.request('PATCH', url, {
      token: owner.token,
      body: new Uint8Array(bytes.subarray(kept)),
      headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(kept) },
    });
    expect(rest.status).toBe(204);
    const file = (await again.request('GET', `/api/files/${rest.headers.get('band-file-id')}`, { token: owner.token })).body;
    expect(file.sha256).toBe(sha256(bytes));
  } finally {
    await running.close();
    await rm(shared.DATA_DIR, { recursive: true, force: true });
  }
});

/** Waits until a PATCH of the upload runs, on a connection of its own (the server may be a process of its own). */
async function untilPatchRuns(databaseUrl: string, url: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  try {
    while (!(await patchRunning(sql, url))) await sleep(20);
  } finally {
    await sql.end();
  }
}
