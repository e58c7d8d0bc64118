import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandApiError, BandClient, BandNetworkError, type Cut } from '../src/index.js';
import { eventually, recordingDispatcher, registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;
let owner: BandClient;
let cut: Cut;
let workDir: string;

const MiB = 1024 * 1024;
const mp3 = (size: number) => Buffer.concat([Buffer.from('ID3'), Buffer.alloc(size - 3, 7)]);

beforeAll(async () => {
  server = await startTestServer();
  owner = (await registeredClient(server.url)).client;
  const project = await owner.projects.create({ name: 'Files' });
  const vibe = await owner.vibes.create(project.id, { name: 'Verse' });
  cut = await owner.cuts.create(vibe.id, { name: 'Take' });
  workDir = await mkdtemp(path.join(os.tmpdir(), 'sdk-files-'));
});
afterAll(async () => {
  await server?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** A sparse ZIP of `size` bytes: real on disk, cheap to make. */
async function zipFile(name: string, size: number): Promise<string> {
  const file = path.join(workDir, name);
  await writeFile(file, Buffer.from('PK\x03\x04', 'latin1'));
  await truncate(file, size);
  return file;
}

const storedCount = async () => (await server.sql`select count(*)::int as n from files`)[0]!.n as number;
const storedBytes = async () =>
  (await Promise.all(['files', 'tmp'].map((dir) => readdir(path.join(server.dataDir, dir)).catch(() => [])))).flat();

describe('upload', () => {
  it('streams a path with byte progress and answers the File record', async () => {
    const bytes = mp3(3 * MiB);
    const file = path.join(workDir, 'demo take.mp3');
    await writeFile(file, bytes);
    const progress: Array<{ loaded: number; total: number | null }> = [];
    const record = await owner.files.upload({ cutId: cut.id, file, onProgress: (p) => progress.push(p) });
    expect(record).toMatchObject({
      cutId: cut.id,
      type: 'CUT',
      size: bytes.length,
      mimeType: 'audio/mpeg',
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    expect(progress.at(-1)).toEqual({ loaded: bytes.length, total: bytes.length });
    expect(progress.length).toBeGreaterThan(1);
    // The background analysis may have run meanwhile (these bytes only look like MP3: it fails).
    expect(await owner.files.get(record.id)).toEqual({ ...record, analysis: expect.stringMatching(/^(pending|failed)$/) });
  });

  it('takes bytes, a Blob/File and a stream of unknown length', async () => {
    const steps: number[] = [];
    const fromBuffer = await owner.files.upload({ cutId: cut.id, file: mp3(MiB), filename: 'a.mp3', name: 'From bytes', onProgress: (p) => steps.push(p.loaded) });
    expect(fromBuffer).toMatchObject({ name: 'From bytes', size: MiB });
    expect(steps).toHaveLength(16);

    const fromFile = await owner.files.upload({ cutId: cut.id, file: new File([mp3(2000)], 'b.MP3') });
    expect(fromFile).toMatchObject({ size: 2000, type: 'CUT' });

    const stream = new PassThrough();
    stream.end(mp3(3000));
    const fromStream = await owner.files.upload({ cutId: cut.id, file: stream, filename: 'c.mp3' });
    expect(fromStream.size).toBe(3000);

    const zip = await zipFile('stems.zip', 4096);
    const fromReadStream = await owner.files.upload({ cutId: cut.id, file: createReadStream(zip) });
    expect(fromReadStream).toMatchObject({ type: 'STEM', size: 4096 });
  });

  it('refuses an unknown type or a file over its limit before sending a byte', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const client = new BandClient({ baseUrl: server.url, dispatcher, ...owner.sessionTokens });
    const unknown = await client.files.upload({ cutId: cut.id, file: Buffer.from('hello'), filename: 'notes.txt' }).catch((e) => e);
    expect(unknown).toBeInstanceOf(BandApiError);
    expect(unknown).toMatchObject({ status: 415, code: 'UNSUPPORTED_FILE_TYPE', requestId: null });

    const big = path.join(workDir, 'big.mp3');
    await writeFile(big, 'ID3');
    await truncate(big, 2 * 1024 * MiB + 1);
    await expect(client.files.upload({ cutId: cut.id, file: big })).rejects.toMatchObject({
      status: 413,
      code: 'FILE_TOO_LARGE',
      detail: 'Audio files (.mp3) may be at most 2 GiB; this one is 2.0 GiB',
    });
    await expect(client.files.upload({ cutId: cut.id, file: mp3(10) })).rejects.toBeInstanceOf(TypeError);
    expect(requests).toEqual([]);
  });

  it('an upload aborted halfway leaves neither a file nor a row on the server', async () => {
    const before = { count: await storedCount(), bytes: (await storedBytes()).length };
    const file = await zipFile('aborted.zip', 64 * MiB);
    const controller = new AbortController();
    const error = await owner.files
      .upload({
        cutId: cut.id,
        file,
        signal: controller.signal,
        onProgress: ({ loaded, total }) => {
          if (loaded > total! / 2) controller.abort();
        },
      })
      .catch((e) => e);
    expect(error).toMatchObject({ name: 'AbortError' });
    await eventually(async () => (await storedBytes()).length === before.bytes);
    expect(await storedCount()).toBe(before.count);
  });

  it('reads the refusal of a server that stops an upload early, before or while reading its bytes', async () => {
    // The server's own limit is lower than the contract's, which the SDK checks: only the server can refuse.
    const strict = await startTestServer({ MAX_AUDIO_BYTES: String(MiB) });
    try {
      const { client } = await registeredClient(strict.url);
      const project = await client.projects.create({ name: 'Strict' });
      const vibe = await client.vibes.create(project.id, { name: 'V' });
      const target = await client.cuts.create(vibe.id, { name: 'C' });
      // Refused on its Content-Length, before a byte is read; then part-way, as the limit is crossed.
      for (const size of [40 * MiB, 1.5 * MiB]) {
        const error = await client.files.upload({ cutId: target.id, file: mp3(size), filename: 'long.mp3' }).catch((e) => e);
        expect(error, `${size} bytes`).toMatchObject({ status: 413, code: 'FILE_TOO_LARGE' });
      }
      // Refused by its leading bytes as soon as they arrive, while the client is still sending.
      const notMp3 = await client.files.upload({ cutId: target.id, file: Buffer.alloc(MiB * 0.9), filename: 'noise.mp3' }).catch((e) => e);
      expect(notMp3).toMatchObject({ status: 415, code: 'UNSUPPORTED_FILE_TYPE' });
      // The client's connections are still good for the next call.
      expect((await client.files.upload({ cutId: target.id, file: mp3(1000), filename: 'short.mp3' })).size).toBe(1000);
    } finally {
      await strict.close();
    }
  });
});

describe('download and delete', () => {
  let record: Awaited<ReturnType<BandClient['files']['upload']>>;
  const content = mp3(2 * MiB + 123);

  beforeAll(async () => {
    record = await owner.files.upload({ cutId: cut.id, file: content, filename: 'song.mp3' });
  });

  it('downloads to a path and to a stream, with progress, and a byte range', async () => {
    const target = path.join(workDir, 'song-copy.mp3');
    const progress: number[] = [];
    const result = await owner.files.download(record.id, { to: target, onProgress: (p) => progress.push(p.loaded) });
    expect(result).toEqual({ size: content.length, path: target });
    expect((await readFile(target)).equals(content)).toBe(true);
    expect(progress.at(-1)).toBe(content.length);

    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ranged = await owner.files.download(record.id, { to: sink, range: { start: 10, end: 19 } });
    expect(ranged).toEqual({ size: 10 });
    expect(Buffer.concat(chunks).equals(content.subarray(10, 20))).toBe(true);
    expect(sink.writableEnded).toBe(false);
  });

  it('resumes an interrupted download with a Range request', async () => {
    const proxy = await faultyProxy(new URL(server.url), MiB, 'cut');
    try {
      const { dispatcher, requests } = recordingDispatcher();
      const client = new BandClient({ baseUrl: proxy.url, dispatcher, ...owner.sessionTokens });
      const target = path.join(workDir, 'resumed.mp3');
      const result = await client.files.download(record.id, { to: target });
      expect(result.size).toBe(content.length);
      expect((await readFile(target)).equals(content)).toBe(true);
      expect(requests.filter((r) => r.endsWith('/download'))).toHaveLength(2);
      expect(proxy.faults()).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('checks a whole download against the sha256 the server announces, and removes a corrupt file', async () => {
    const proxy = await faultyProxy(new URL(server.url), MiB, 'flip');
    try {
      const client = new BandClient({ baseUrl: proxy.url, ...owner.sessionTokens });
      const target = path.join(workDir, 'corrupt.mp3');
      const error = await client.files.download(record.id, { to: target }).catch((e) => e);
      expect(error).toBeInstanceOf(BandNetworkError);
      expect(error.message).toMatch(/sha256/);
      expect(proxy.faults()).toBe(1);
      await expect(stat(target)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await proxy.close();
    }
  });

  it('removes the partial file when a download fails', async () => {
    const target = path.join(workDir, 'missing.mp3');
    await expect(owner.files.download('00000000-0000-4000-8000-000000000000', { to: target })).rejects.toMatchObject({ status: 404 });
    await expect(stat(target)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('deletes a file', async () => {
    expect(await owner.files.delete(record.id)).toEqual({ id: record.id, deleted: true, trashedUntil: expect.any(String) });
    await expect(owner.files.get(record.id)).rejects.toMatchObject({ status: 404 });
    await expect(owner.files.download(record.id, { to: new PassThrough() })).rejects.toMatchObject({ status: 404 });
  });
});

/**
 * A loopback TCP proxy that passes everything through, except that the first response longer than
 * `limit` bytes is damaged there: cut (a connection lost mid-download) or with one byte flipped.
 */
async function faultyProxy(target: URL, limit: number, fault: 'cut' | 'flip') {
  let faults = 0;
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    let sent = 0;
    upstream.on('data', (chunk: Buffer) => {
      sent += chunk.length;
      if (faults === 0 && sent > limit) {
        faults += 1;
        if (fault === 'cut') {
          client.destroy();
          upstream.destroy();
          return;
        }
        chunk = Buffer.from(chunk);
        chunk[chunk.length - 1]! ^= 0xff;
      }
      client.write(chunk);
    });
    upstream.on('end', () => client.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    faults: () => faults,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

describe('session folders (§16)', () => {
  it('uploads with a path (multipart and resumable), renames with versionOf, lists the latest with paths, and checks a path locally', async () => {
    const vibe = await owner.vibes.create((await owner.projects.create({ name: 'Session' })).id, { name: 'Songs' });
    const session = await owner.cuts.create(vibe.id, { name: 'Song' });
    const take = await owner.files.upload({ cutId: session.id, file: mp3(1000), filename: 'take.mp3', path: 'Audio Files/Take 1.mp3', resumable: false });
    expect(take).toMatchObject({ path: 'Audio Files/Take 1.mp3', type: 'CUT' });
    // A DAW project file: any extension with a path, through a resumable upload.
    const project = path.join(workDir, 'Song.ptx');
    await writeFile(project, 'not audio');
    const ptx = await owner.files.upload({ cutId: session.id, file: project, path: 'Song.ptx', resumable: true });
    expect(ptx).toMatchObject({ path: 'Song.ptx', type: 'SESSION', mimeType: 'application/octet-stream' });
    const renamed = await owner.files.upload({ versionOf: take.id, file: mp3(1000), filename: 'take.mp3', path: 'Audio Files/Take 1 (keep).mp3' });
    expect(renamed).toMatchObject({ path: 'Audio Files/Take 1 (keep).mp3', series: { id: take.id, version: 2 } });
    const kept = await owner.files.upload({ versionOf: ptx.id, file: Buffer.from('saved again'), filename: 'Song.ptx', resumable: true });
    expect(kept).toMatchObject({ path: 'Song.ptx', series: { id: ptx.id, version: 2 } });

    const latest = await owner.cuts.get(session.id, { latest: true });
    expect(latest.files.map((file) => [file.path, file.series.version])).toEqual([
      ['Audio Files/Take 1 (keep).mp3', 2],
      ['Song.ptx', 2],
    ]);
    expect((await owner.cuts.get(session.id)).files).toHaveLength(4);

    const taken = await owner.files.upload({ cutId: session.id, file: mp3(1000), filename: 'x.mp3', path: 'song.PTX' }).catch((e) => e);
    expect(taken).toMatchObject({ status: 409, code: 'PATH_TAKEN', problem: { fileId: kept.id } });
    const { dispatcher, requests } = recordingDispatcher();
    const client = new BandClient({ baseUrl: server.url, dispatcher, ...owner.sessionTokens });
    await expect(client.files.upload({ cutId: session.id, file: mp3(1000), filename: 'x.mp3', path: '../x.mp3' })).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    await expect(client.files.upload({ cutId: session.id, file: Buffer.from('x'), filename: 'Song.ptx' })).rejects.toMatchObject({ status: 415 });
    expect(requests).toEqual([]);
  });
});
