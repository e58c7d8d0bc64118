import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ProjectEvent } from '@bandcollab/sdk';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventSocket, openEventSocket } from './support/event-socket.js';
import { multipartPieces, rawUpload, sampleBytes, toneWav, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { type ServerEnv, type ServerProcess, spawnServer } from './support/process.js';
import { createTestDatabase } from './support/server.js';
import { openPatch, patchRunning, TUS } from './support/tus.js';
import { until } from './support/until.js';

// Two real server processes, A and B, on one PostgreSQL and one store, with requests alternating between
// them as a load balancer without sticky sessions would send them (API.md §15, several instances).

const MiB = 1024 * 1024;
const LOGIN_MAX_FAILURES = 4;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Where both instances keep stored bytes: today the local directory they share. */
type StorageSettings = ServerEnv;

/** The store the instances share. For the S3 driver: `{ DATA_DIR, STORAGE: 's3', S3_BUCKET: …, S3_ENDPOINT: … }`. */
async function sharedStorage(): Promise<StorageSettings> {
  return { DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'bandcollab-instances-')) };
}

let storage: StorageSettings;
let databaseUrl: string;
let sql: postgres.Sql;
const started: ServerProcess[] = [];

/** One instance: the shared database and store, one JWT_SECRET, a port of its own. */
async function startInstance(store: StorageSettings): Promise<ServerProcess> {
  const instance = await spawnServer({
    ...store,
    DATABASE_URL: databaseUrl,
    JWT_SECRET: 'instances-secret-instances-secret-0123456789',
    TRUST_PROXY: 'true',
    LOGIN_MAX_FAILURES: String(LOGIN_MAX_FAILURES),
    // Deletes for good, as these tests follow a delete's bytes and events across instances (the trash has its own).
    TRASH_RETENTION_DAYS: '0',
  });
  started.push(instance);
  return instance;
}


async function download(baseUrl: string, token: string, fileId: string): Promise<{ status: number; bytes: Buffer }> {
  const response = await fetch(`${baseUrl}/api/files/${fileId}/download`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

const ofFile = (type: string, fileId: string) => (event: ProjectEvent) => event.type === type && (event.data as { fileId?: string }).fileId === fileId;

let a: ServerProcess;
let b: ServerProcess;
let owner: Awaited<ReturnType<typeof userWithCut>>;

beforeAll(async () => {
  storage = await sharedStorage();
  databaseUrl = await createTestDatabase();
  sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
});
afterAll(async () => {
  for (const instance of started) {
    if (instance.child.exitCode === null && instance.child.signalCode === null) instance.child.kill('SIGKILL');
    await instance.exited;
  }
  await sql?.end({ timeout: 1 });
  await rm(storage.DATA_DIR, { recursive: true, force: true });
});

describe('two instances on one database and one store', () => {
  it('starts B beside A without touching the upload A is receiving', async () => {
    a = await startInstance(storage);
    owner = await userWithCut(client(a.url));
    const bytes = sampleBytes('wav', 2 * MiB);
    const { contentType, head, tail } = multipartPieces(owner.cutId, 'take.wav');
    let sendRest!: () => void;
    const answered = rawUpload(a.url, owner.token, { 'content-type': contentType, 'content-length': head.length + bytes.length + tail.length }, (request) => {
      request.write(head);
      request.write(bytes.subarray(0, MiB));
      sendRest = () => request.end(Buffer.concat([bytes.subarray(MiB), tail]));
    });
    // The local driver streams an upload into DATA_DIR/tmp: A holds the first MiB there, mid-upload.
    const tempDir = path.join(storage.DATA_DIR, 'tmp');
    const received = async () => {
      let total = 0;
      for (const name of await readdir(tempDir).catch(() => [])) total += (await stat(path.join(tempDir, name)).catch(() => ({ size: 0 }))).size;
      return total;
    };
    await until("A's upload to reach its temporary file", async () => (await received()) >= MiB, 60_000);

    b = await startInstance(storage);
    sendRest();
    const answer = await answered;
    expect(answer?.status, answer?.body).toBe(201);
    const fileId = (JSON.parse(answer!.body) as { id: string }).id;
    const fromB = await download(b.url, owner.token, fileId);
    expect(fromB.status).toBe(200);
    expect(fromB.bytes.equals(bytes)).toBe(true);
  });

  it("serves A's upload from B, deletes it through B, and A's WebSocket hears of it", async () => {
    const socket = await openEventSocket(a.url, { token: owner.token });
    try {
      const bytes = sampleBytes('mp3', 300_000);
      const uploaded = await upload(client(a.url), owner.token, owner.cutId, 'idea.mp3', bytes);
      expect(uploaded.status).toBe(201);
      const fromB = await download(b.url, owner.token, uploaded.body.id);
      expect(fromB.status).toBe(200);
      expect(sha256(fromB.bytes)).toBe(sha256(bytes));

      expect((await client(b.url).request('DELETE', `/api/files/${uploaded.body.id}`, { token: owner.token })).status).toBe(200);
      const deleted = await socket.waitFor(ofFile('file.deleted', uploaded.body.id), 60_000);
      expect(deleted.actor.id).toBe(owner.user.user.id);
      expect((await download(a.url, owner.token, uploaded.body.id)).status).toBe(404);
    } finally {
      socket.close();
    }
  });

  it('analyses a file uploaded on A once, by either instance', async () => {
    const sockets = await Promise.all([a, b].map((instance) => openEventSocket(instance.url, { token: owner.token })));
    try {
      const uploaded = await upload(client(a.url), owner.token, owner.cutId, 'tone.wav', toneWav(2));
      expect(uploaded.status).toBe(201);
      const fileId = uploaded.body.id as string;
      for (const socket of sockets) expect((await socket.waitFor(ofFile('file.analyzed', fileId), 120_000)).data).toMatchObject({ analysis: 'done' });
      // A later event from B: whatever either instance published about the file before it has arrived too.
      expect((await client(b.url).request('DELETE', `/api/files/${fileId}`, { token: owner.token })).status).toBe(200);
      for (const socket of sockets) {
        await socket.waitFor(ofFile('file.deleted', fileId), 60_000);
        expect(socket.events.filter(ofFile('file.analyzed', fileId))).toHaveLength(1);
      }
    } finally {
      for (const socket of sockets) socket.close();
    }
  });

  it('counts failed logins once across both instances', async () => {
    const login = (instance: ServerProcess, password: string) =>
      client(instance.url).request('POST', '/api/auth/login', {
        json: { email: owner.user.user.email, password },
        headers: { 'x-forwarded-for': '198.51.100.7' },
      });
    for (let attempt = 0; attempt < LOGIN_MAX_FAILURES; attempt++) expect((await login(attempt % 2 === 0 ? a : b, 'wrong password')).status).toBe(401);
    for (const instance of [a, b]) expect((await login(instance, owner.user.password)).status).toBe(429);
  });

  it("accepts on B the sessions and tokens A issued, and refuses them on A once B ended them", async () => {
    const api = { a: client(a.url), b: client(b.url) };
    const session = (await api.a.request('POST', '/api/auth/login', { json: { email: owner.user.user.email, password: owner.user.password } })).body;
    expect((await api.b.request('GET', '/api/auth/me', { token: session.accessToken })).status).toBe(200);
    const refreshed = await api.b.request('POST', '/api/auth/refresh', { json: { refreshToken: session.refreshToken } });
    expect(refreshed.status).toBe(200);
    expect((await api.a.request('GET', '/api/auth/me', { token: refreshed.body.accessToken })).status).toBe(200);

    const created = await api.a.request('POST', '/api/tokens', { token: session.accessToken, json: { name: 'CI', scope: 'read', expiresIn: 3600 } });
    expect(created.status).toBe(201);
    expect((await api.b.request('GET', `/api/projects/${owner.projectId}`, { token: created.body.token })).status).toBe(200);
    expect((await api.a.request('GET', `/api/projects/${owner.projectId}`, { token: created.body.token })).status).toBe(200);

    expect((await api.b.request('DELETE', `/api/tokens/${created.body.id}`, { token: refreshed.body.accessToken })).status).toBe(200);
    expect((await api.b.request('POST', '/api/auth/logout', { token: refreshed.body.accessToken, json: { refreshToken: refreshed.body.refreshToken } })).status).toBe(200);
    await noticesReached(a);
    expect((await api.a.request('GET', '/api/auth/me', { token: refreshed.body.accessToken })).status).toBe(401);
    expect((await api.a.request('GET', `/api/projects/${owner.projectId}`, { token: created.body.token })).status).toBe(401);
  });

  it('completes on B, byte-identical, a resumable upload begun on A after A is killed mid-PATCH', async () => {
    const bytes = sampleBytes('zip', 8 * MiB);
    const created = await client(a.url).request('POST', '/api/uploads', {
      token: owner.token,
      headers: { ...TUS, 'upload-length': String(bytes.length), 'upload-metadata': `cutId ${btoa(owner.cutId)},filename ${btoa('stems.zip')}` },
    });
    expect(created.status).toBe(201);
    const url = created.headers.get('location')!;
    const patch = (instance: ServerProcess, offset: number, body: Buffer) =>
      client(instance.url).request('PATCH', url, {
        token: owner.token,
        body: new Uint8Array(body),
        headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
      });
    expect((await patch(a, 0, bytes.subarray(0, 3 * MiB))).status).toBe(204);

    // The next PATCH to A announces the rest, sends 2 MiB of it and hangs: A is killed while it reads.
    const socket = await openPatch(a.url, owner.token, url, 3 * MiB, 5 * MiB, bytes.subarray(3 * MiB, 5 * MiB));
    socket.on('error', () => undefined);
    // A's PATCH runs once it holds the upload's advisory lock (class "tus!"); its bytes are in no file to watch
    // (the store keeps whole parts, PostgreSQL the tail, both written only as the PATCH is answered).
    await until("A's PATCH to hold the upload's lock", () => patchRunning(sql, url), 60_000);
    a.child.kill('SIGKILL');
    await a.exited;
    socket.destroy();
    // PostgreSQL frees the upload's lock once it notices that A's connection is gone; until then B answers 423.
    // Of class "tus!" (0x74757321): each instance also holds a two-key lock of the job queue's.
    await until("A's upload lock to be freed", async () => (await sql`select 1 from pg_locks where locktype = 'advisory' and objsubid = 2 and classid = ${0x74757321}::bigint::oid and database = (select oid from pg_database where datname = current_database())`).length === 0, 60_000);

    const status = await client(b.url).request('HEAD', url, { token: owner.token, headers: TUS });
    expect(status.status).toBe(200);
    // The answered PATCH is durable; the cut-off one was never acknowledged.
    const offset = Number(status.headers.get('upload-offset'));
    expect(offset).toBe(3 * MiB);
    const rest = await patch(b, offset, bytes.subarray(offset));
    expect(rest.status, rest.text).toBe(204);
    const fileId = rest.headers.get('band-file-id')!;
    expect((await client(b.url).request('GET', `/api/files/${fileId}`, { token: owner.token })).body.sha256).toBe(sha256(bytes));
    const stored = await download(b.url, owner.token, fileId);
    expect(stored.bytes.equals(bytes)).toBe(true);
  });
});

/**
 * Resolves once `instance` has handled every notice committed so far, without a clock: PostgreSQL delivers
 * notices in commit order, so once a bystander's later logout (through B) has closed its event socket on
 * `instance` (4401), every earlier notice reached it too.
 */
async function noticesReached(instance: ServerProcess): Promise<void> {
  const bystander = await client(b.url).register();
  const socket: EventSocket = await openEventSocket(instance.url, { token: bystander.accessToken });
  await client(b.url).request('POST', '/api/auth/logout', { token: bystander.accessToken, json: { refreshToken: bystander.refreshToken } });
  expect((await socket.closed).code).toBe(4401);
}
