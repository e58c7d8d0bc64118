import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandApiError, BandClient, type Cut, FileResumeStore } from '../src/index.js';
import { answerRecordingDispatcher, eventually, recordingDispatcher, registeredClient, startTestServer, type TestServer } from './support.js';

// files.upload() through the server's resumable uploads: chosen by size, continued after a broken
// connection, left resumable by an abort and resumed by a later call through a FileResumeStore.

let server: TestServer;
let owner: BandClient;
let cut: Cut;
let workDir: string;

const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A ZIP-looking file of `size` bytes with varied content, so a misplaced byte changes the hash. */
function zipBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 7919 + (i >> 13)) & 0xff;
  bytes.write('PK\x03\x04', 0, 'latin1');
  return bytes;
}

beforeAll(async () => {
  server = await startTestServer();
  owner = (await registeredClient(server.url)).client;
  const project = await owner.projects.create({ name: 'Resumable' });
  const vibe = await owner.vibes.create(project.id, { name: 'Verse' });
  cut = await owner.cuts.create(vibe.id, { name: 'Take' });
  workDir = await mkdtemp(path.join(os.tmpdir(), 'sdk-resumable-'));
});
afterAll(async () => {
  await server?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** A TCP proxy to the server that cuts the first connection carrying a PATCH once `cutAfter` bytes went through. */
async function cuttingProxy(cutAfter: number): Promise<{ url: string; cuts: number; close(): void }> {
  const target = new URL(server.url);
  const state = { url: '', cuts: 0, close: () => proxy.close() };
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    let forwarded = 0;
    let patching = false;
    client.on('data', (chunk: Buffer) => {
      if (!patching && chunk.subarray(0, 6).toString('latin1') === 'PATCH ') patching = state.cuts === 0;
      forwarded += chunk.length;
      upstream.write(chunk);
      if (patching && forwarded > cutAfter) {
        state.cuts += 1;
        patching = false;
        client.destroy();
        upstream.destroy();
      }
    });
    upstream.on('data', (chunk) => client.write(chunk));
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  return state;
}

/** The upload URLs a FileResumeStore file holds. */
async function storedUrls(file: string): Promise<string[]> {
  return Object.values(JSON.parse(await readFile(file, 'utf8')) as Record<string, { url: string }>).map((entry) => entry.url);
}

async function uploadOffset(url: string): Promise<number> {
  const response = await fetch(url, { method: 'HEAD', headers: { authorization: `Bearer ${owner.sessionTokens.accessToken}`, 'tus-resumable': '1.0.0' } });
  return Number(response.headers.get('upload-offset'));
}

/** An upload of 12 MiB aborted after 1 MiB, its URL in a FileResumeStore; answers once the server has saved its bytes and let go of its lock. */
async function abortedUpload(name: string) {
  const bytes = zipBytes(12 * MiB);
  const file = path.join(workDir, name);
  await writeFile(file, bytes);
  const store = new FileResumeStore(path.join(workDir, name.replace(/\W+/g, '-'), 'uploads.json'));
  const controller = new AbortController();
  await expect(
    owner.files.upload({ cutId: cut.id, file, resumeStore: store, signal: controller.signal, onProgress: ({ loaded }) => loaded >= MiB && controller.abort() }),
  ).rejects.toThrow();
  const url = (await storedUrls(store.filePath))[0]!;
  await eventually(async () => (await uploadOffset(url)) > 0);
  await eventually(async () => (await emptyPatch(url, await uploadOffset(url))).status === 204);
  return { bytes, file, store, url };
}

/** A PATCH without bytes: 204 while no request holds the upload's lock (and `offset` is right), 423 while one does. */
function emptyPatch(url: string, offset: number): Promise<Response> {
  return fetch(url, {
    method: 'PATCH',
    headers: {
      authorization: `Bearer ${owner.sessionTokens.accessToken}`,
      'tus-resumable': '1.0.0',
      'upload-offset': String(offset),
      'content-type': 'application/offset+octet-stream',
    },
    body: Buffer.alloc(0),
  });
}

/**
 * A raw PATCH that sends 1 MiB of the rest of `bytes` and holds the upload's lock, its body unfinished, until
 * released (its connection then closes and the server saves that MiB). Answers once the server holds the lock,
 * seen in pg_locks: a probing request could take the lock itself and have the raw PATCH refused.
 */
async function holdLock(url: string, bytes: Buffer): Promise<{ release(): void }> {
  const saved = await uploadOffset(url);
  const target = new URL(url);
  const holder = net.connect(Number(target.port), target.hostname);
  holder.on('error', () => undefined);
  holder.write(
    [
      `PATCH ${target.pathname} HTTP/1.1`,
      `host: ${target.host}`,
      `authorization: Bearer ${owner.sessionTokens.accessToken}`,
      'tus-resumable: 1.0.0',
      `upload-offset: ${saved}`,
      'content-type: application/offset+octet-stream',
      `content-length: ${bytes.length - saved}`,
      '',
      '',
    ].join('\r\n'),
  );
  holder.write(bytes.subarray(saved, saved + MiB));
  const uploadId = target.pathname.split('/').at(-1)!;
  await eventually(async () => {
    const locks = await server.sql`
      select 1 from pg_locks
      where locktype = 'advisory' and granted and objid = hashtext(${uploadId})::oid
        and database = (select oid from pg_database where datname = current_database())`;
    return locks.length > 0;
  });
  return { release: () => holder.destroy() };
}

/**
 * A client of the owner's session that counts the answers of `status` it received; `received(n)` waits until it
 * has had `n` of them (the server holds a lock or every upload slot until the test lets go: a wait on that
 * event, not on time).
 */
function countingClient(status: 423 | 429) {
  const { dispatcher, answers } = answerRecordingDispatcher();
  const client = new BandClient({ baseUrl: server.url, ...owner.sessionTokens, dispatcher });
  const count = () => answers.filter((answer) => answer.status === status).length;
  return { client, received: (n: number) => eventually(async () => count() >= n, 30_000) };
}

describe('resumable uploads', () => {
  it('sends a file of 8 MiB or more through /api/uploads and answers the same File record', async () => {
    const bytes = zipBytes(9 * MiB);
    const file = path.join(workDir, 'stems.zip');
    await writeFile(file, bytes);
    const { dispatcher, requests } = recordingDispatcher();
    const client = new BandClient({ baseUrl: server.url, dispatcher, ...owner.sessionTokens });
    const record = await client.files.upload({ cutId: cut.id, file, name: 'Stems' });
    expect(record).toMatchObject({ cutId: cut.id, name: 'Stems', type: 'STEM', size: bytes.length, sha256: sha256(bytes) });
    expect(requests.map((request) => request.replace(/[0-9a-f-]{36}/g, ':id'))).toEqual(['POST /api/uploads', 'PATCH /api/uploads/:id', `GET /api/files/:id`]);

    const small = await client.files.upload({ cutId: cut.id, file: zipBytes(MiB), filename: 'small.zip' });
    expect(small.size).toBe(MiB);
    expect(requests.at(-1)).toBe('POST /api/files/upload');
    await client.files.upload({ cutId: cut.id, file, resumable: false });
    expect(requests.at(-1)).toBe('POST /api/files/upload');
  });

  it('continues after the connection breaks mid-PATCH: HEAD, then the rest; progress never moves back', async () => {
    const proxy = await cuttingProxy(3 * MiB);
    try {
      const bytes = zipBytes(10 * MiB);
      const { dispatcher, requests } = recordingDispatcher();
      const client = new BandClient({ baseUrl: proxy.url, dispatcher, ...owner.sessionTokens });
      const loaded: number[] = [];
      const record = await client.files.upload({ cutId: cut.id, file: bytes, filename: 'take.zip', onProgress: (p) => loaded.push(p.loaded) });
      expect(proxy.cuts).toBe(1);
      expect(record.sha256).toBe(sha256(bytes));
      const methods = requests.map((request) => request.split(' ')[0]);
      // The offset (HEAD) and an empty PATCH checking the lock, again while the server still saves the cut-off
      // PATCH (423), then the rest.
      expect(methods.join(' ')).toMatch(/^POST PATCH (HEAD PATCH )+PATCH GET$/);
      expect(loaded.every((value, i) => i === 0 || value > loaded[i - 1]!)).toBe(true);
      expect(loaded.at(-1)).toBe(bytes.length);
    } finally {
      proxy.close();
    }
  });

  it('leaves an aborted upload resumable; a later call with the same store resumes it and forgets it once complete', async () => {
    const bytes = zipBytes(24 * MiB);
    const file = path.join(workDir, 'long take.zip');
    await writeFile(file, bytes);
    const storePath = path.join(workDir, 'state', 'uploads.json');
    const store = new FileResumeStore(storePath);
    const controller = new AbortController();
    const first = owner.files.upload({
      cutId: cut.id,
      file,
      resumeStore: store,
      signal: controller.signal,
      onProgress: ({ loaded }) => {
        if (loaded >= 4 * MiB) controller.abort(new Error('stopped by the user'));
      },
    });
    await expect(first).rejects.toMatchObject({ name: 'AbortError', cause: new Error('stopped by the user') });
    const urls = await storedUrls(storePath);
    expect(urls).toHaveLength(1);
    // A later run: by then the server has saved what the aborted request sent.
    await eventually(async () => (await uploadOffset(urls[0]!)) > 0);

    const resumedAt: number[] = [];
    const record = await owner.files.upload({ cutId: cut.id, file, resumeStore: store, onResume: (offset) => resumedAt.push(offset) });
    expect(resumedAt).toHaveLength(1);
    expect(resumedAt[0]).toBeGreaterThan(0);
    expect(record.sha256).toBe(sha256(bytes));
    expect(JSON.parse(await readFile(storePath, 'utf8'))).toEqual({});
  });

  it('waits out a 423 for longer than its retries: another PATCH holding the lock past them, then the rest, byte-identical', async () => {
    const { bytes, file, store, url } = await abortedUpload('locked take.zip');
    const holder = await holdLock(url, bytes);
    const { client, received } = countingClient(423);
    const upload = client.files.upload({ cutId: cut.id, file, resumeStore: store }, { retries: 2 });
    // Fails at once if the upload gives up on the 423s instead.
    await Promise.race([received(4), upload]);
    holder.release();

    const record = await upload;
    expect(record.size).toBe(bytes.length);
    const downloaded = path.join(workDir, 'locked take (downloaded).zip');
    await owner.files.download(record.id, { to: downloaded });
    expect((await readFile(downloaded)).equals(bytes)).toBe(true);
    expect(JSON.parse(await readFile(store.filePath, 'utf8'))).toEqual({});
  });

  it("waits out a 429 while three other uploads of the user's receive bytes, then completes", async () => {
    const bytes = zipBytes(8 * MiB);
    const others: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await fetch(`${server.url}/api/uploads`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${owner.sessionTokens.accessToken}`,
          'tus-resumable': '1.0.0',
          'upload-length': String(bytes.length),
          'upload-metadata': `cutId ${btoa(cut.id)},filename ${btoa(`other${i}.zip`)}`,
        },
      });
      others.push(new URL(created.headers.get('location')!, server.url).href);
    }
    const holders = await Promise.all(others.map((url) => holdLock(url, bytes)));
    const file = path.join(workDir, 'fourth.zip');
    await writeFile(file, bytes);
    const { client, received } = countingClient(429);
    const upload = client.files.upload({ cutId: cut.id, file }, { retries: 2 });
    await Promise.race([received(4), upload]);
    for (const holder of holders) holder.release();

    const record = await upload;
    expect(record.sha256).toBe(sha256(bytes));
  });

  it('stops waiting out a 423 at once when its signal aborts', async () => {
    const { file, store, url, bytes } = await abortedUpload('aborted while locked.zip');
    const holder = await holdLock(url, bytes);
    try {
      const controller = new AbortController();
      const { client, received } = countingClient(423);
      const upload = client.files.upload({ cutId: cut.id, file, resumeStore: store, signal: controller.signal });
      await received(1);
      controller.abort(new Error('stopped while locked'));
      // The lock is still held: only the signal can have ended the wait.
      await expect(upload).rejects.toMatchObject({ name: 'AbortError', cause: new Error('stopped while locked') });
    } finally {
      holder.release();
    }
  });

  it('cancelUpload waits out a 423 for longer than its retries', async () => {
    const { bytes, url } = await abortedUpload('cancelled while locked.zip');
    const holder = await holdLock(url, bytes);
    const { client, received } = countingClient(423);
    const cancelled = client.files.cancelUpload(url, { retries: 2 });
    await Promise.race([received(4), cancelled]);
    holder.release();
    await cancelled;
    await expect(owner.files.cancelUpload(url)).rejects.toMatchObject({ status: 404 });
  });

  it('terminates an upload with cancelUpload(url)', async () => {
    const bytes = zipBytes(12 * MiB);
    const file = path.join(workDir, 'cancelled.zip');
    await writeFile(file, bytes);
    const store = new FileResumeStore(path.join(workDir, 'cancel', 'uploads.json'));
    const controller = new AbortController();
    await expect(
      owner.files.upload({
        cutId: cut.id,
        file,
        resumeStore: store,
        signal: controller.signal,
        onProgress: ({ loaded }) => loaded >= MiB && controller.abort(),
      }),
    ).rejects.toThrow();
    const url = (await storedUrls(store.filePath))[0]!;
    await owner.files.cancelUpload(url);
    const again = owner.files.cancelUpload(url);
    await expect(again).rejects.toBeInstanceOf(BandApiError);
    await expect(again).rejects.toMatchObject({ status: 404 });
  });
});

describe('FileResumeStore', () => {
  it('keeps every entry when parallel uploads of one process change the file at once', async () => {
    const file = path.join(workDir, 'parallel', 'uploads.json');
    const stores = [new FileResumeStore(file), new FileResumeStore(file)];
    await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.set(`print-${i}`, `http://band.test/api/uploads/${i}`)));
    expect(await storedUrls(file)).toHaveLength(20);
    await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.remove(`print-${i}`)));
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({});
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('drops entries last written more than 24 h ago whenever it writes; an entry of the URL alone (earlier versions) counts as written now', async () => {
    const file = path.join(workDir, 'stale', 'uploads.json');
    const hour = 60 * 60 * 1000;
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(
      file,
      JSON.stringify({
        stale: { url: 'http://band.test/api/uploads/stale', writtenAt: Date.now() - 25 * hour },
        recent: { url: 'http://band.test/api/uploads/recent', writtenAt: Date.now() - 23 * hour },
        earlier: 'http://band.test/api/uploads/earlier',
      }),
    );
    const store = new FileResumeStore(file);
    // Reading changes nothing: a stale entry is only dropped by a write.
    expect(await store.get('stale')).toBe('http://band.test/api/uploads/stale');
    expect(await store.get('earlier')).toBe('http://band.test/api/uploads/earlier');

    const before = Date.now();
    await store.set('new', 'http://band.test/api/uploads/new');
    const entries = JSON.parse(await readFile(file, 'utf8')) as Record<string, { url: string; writtenAt: number }>;
    expect(Object.keys(entries).sort()).toEqual(['earlier', 'new', 'recent']);
    expect(entries.earlier!.url).toBe('http://band.test/api/uploads/earlier');
    expect(entries.earlier!.writtenAt).toBeGreaterThanOrEqual(before);
    expect(entries.new!.writtenAt).toBeGreaterThanOrEqual(before);
    expect(await store.get('stale')).toBeUndefined();
    expect(await store.get('recent')).toBe('http://band.test/api/uploads/recent');

    await store.remove('new');
    expect(Object.keys(JSON.parse(await readFile(file, 'utf8')) as object).sort()).toEqual(['earlier', 'recent']);
  });
});
