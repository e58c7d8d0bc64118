/**
 * Connection limits, against the built server in its own process: slow or idle clients are cut by the
 * header, body-idle and keep-alive timeouts (and their partial uploads removed), while clients that keep
 * sending or reading are served however long they take; a client that goes away mid-request is logged at
 * `info`, never as a database failure.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedProject } from './authz/fixture.js';
import { openEventSocket } from './support/event-socket.js';
import { sampleBytes, upload } from './support/files.js';
import { client } from './support/http.js';
import { type LoggedServer, startLoggedServer } from './support/logged-server.js';
import { logLines, waitForLog } from './support/logs.js';
import { answersOn, multipartUpload, openSocket, requestHead, sleep, whenClosed } from './support/raw-http.js';

const LARGE_FILE_BYTES = 16 * 1024 * 1024;

let server: LoggedServer;
let token: string;
let cutId: string;
let largeFileId: string;

beforeAll(async () => {
  server = await startLoggedServer({ HEADERS_TIMEOUT_SECONDS: '1', IDLE_TIMEOUT_SECONDS: '1' });
  const api = client(server.url);
  const user = await api.register();
  token = user.accessToken;
  cutId = (await seedProject(api, token)).cutId;
  const uploaded = await upload(api, token, cutId, 'long-take.wav', sampleBytes('wav', LARGE_FILE_BYTES));
  expect(uploaded.status, uploaded.text).toBe(201);
  largeFileId = uploaded.body.id;
}, 120_000);
afterAll(() => server?.stop());

const tempFiles = () => readdir(path.join(server.dataDir, 'tmp'));

async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await sleep(50);
}

/** Sends the head and the first bytes of an upload of `fileSize` bytes; resolves once its file is being stored. */
async function startUpload(requestId: string, fileSize: number): Promise<{ socket: Socket; form: ReturnType<typeof multipartUpload> }> {
  const socket = await openSocket(server.url);
  const form = multipartUpload({ cutId }, 'take.mp3', fileSize);
  socket.write(
    requestHead('POST', '/api/files/upload', {
      Authorization: `Bearer ${token}`,
      'Content-Type': form.contentType,
      'Content-Length': form.contentLength,
      'X-Request-Id': requestId,
      Connection: 'close',
    }),
  );
  socket.write(form.head);
  socket.write(sampleBytes('mp3', 64 * 1024));
  await waitUntil(async () => (await tempFiles()).length > 0);
  return { socket, form };
}

const errorLines = () => logLines(server.output()).filter((line) => line.level === 'error');

describe('slow and idle clients', () => {
  // Most of these wait out real timeouts (1 s, 5 s keep-alive, a 4 s transfer): they wait side by side. The
  // one that counts partial files in tmp/ runs alone first, as the steady upload keeps one there.
  it('cuts an upload that stops sending and removes its partial file', async () => {
    const requestId = `stalled-upload-${randomUUID()}`;
    const { socket } = await startUpload(requestId, 1024 * 1024);
    await whenClosed(socket);
    await waitUntil(async () => (await tempFiles()).length === 0);
    expect((await waitForLog(server.output, (line) => line.reqId === requestId)).level).toBe('info');
    expect(errorLines()).toEqual([]);
  });

  it.concurrent('closes an idle keep-alive connection after 5 s', async () => {
    const socket = await openSocket(server.url);
    const closed = whenClosed(socket);
    let answeredAt = 0;
    socket.once('data', () => (answeredAt = Date.now()));
    socket.write(requestHead('GET', '/api/health', {}));
    const answer = await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/\r\nKeep-Alive: timeout=5\r\n/i);
    expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(5000);
  });

  it.concurrent('keeps a slow download whose reader keeps reading', async () => {
    const started = Date.now();
    const received = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/api/files/${largeFileId}/download`, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
        let total = 0;
        res.on('data', (chunk: Buffer) => {
          total += chunk.length;
          // About 4 MiB/s: the 16 MiB take needs some 4 s, longer than the kernel buffers hold.
          res.pause();
          setTimeout(() => res.resume(), chunk.length / 4096);
        });
        res.on('end', () => resolve(total));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(received).toBe(LARGE_FILE_BYTES);
    expect(Date.now() - started).toBeGreaterThan(2000);
  });

  it.concurrent('keeps an upload that sends slowly but never stops, however long it takes', async () => {
    const chunk = 16 * 1024;
    const fileSize = 64 * 1024 + 40 * chunk;
    const { socket, form } = await startUpload(`steady-upload-${randomUUID()}`, fileSize);
    const answer = whenClosed(socket);
    // 40 more chunks, 100 ms apart: about 4 s in all, four times the idle timeout. A tenth of the timeout
    // between chunks, so a test process held up for a moment on a loaded machine still sends in time.
    const bytes = sampleBytes('mp3', fileSize);
    for (let offset = 64 * 1024; offset < fileSize; offset += chunk) {
      await sleep(100);
      socket.write(bytes.subarray(offset, offset + chunk));
    }
    socket.write(form.tail);
    expect(await answer).toMatch(/^HTTP\/1\.1 201 /);
  });

  it.concurrent('closes a connection whose request headers keep trickling past the header timeout', async () => {
    const socket = await openSocket(server.url);
    const closed = whenClosed(socket);
    socket.write('GET /api/health HTTP/1.1\r\nHost: localhost\r\n');
    // A header line every 200 ms: never idle, so only the header timeout can end it.
    let open = true;
    void closed.then(() => (open = false));
    for (let i = 0; open; i++) {
      socket.write(`X-Trickle-${i}: y\r\n`);
      await sleep(200);
    }
    expect(await closed).toMatch(/^HTTP\/1\.1 408 /);
  });

  it.concurrent('cuts a JSON body that stops sending, and logs it at info', async () => {
    const requestId = `stalled-json-${randomUUID()}`;
    const socket = await openSocket(server.url);
    const closed = whenClosed(socket);
    socket.write(requestHead('POST', '/api/auth/login', { 'Content-Type': 'application/json', 'Content-Length': 100, 'X-Request-Id': requestId }));
    socket.write('{');
    await closed;
    const logged = await waitForLog(server.output, (line) => line.reqId === requestId);
    expect(logged.level).toBe('info');
    expect(errorLines()).toEqual([]);
  });

  it.concurrent('leaves an events WebSocket open past the idle timeout (it has its own heartbeat)', async () => {
    const events = await openEventSocket(server.url, { token });
    // A request opened after the socket whose body stops: once the idle timeout has cut it, the socket (idle
    // since its hello, for longer) would have been cut too; a ping it answers proves it was not.
    const stalled = await openSocket(server.url);
    const cut = whenClosed(stalled);
    stalled.write(requestHead('POST', '/api/auth/login', { 'Content-Type': 'application/json', 'Content-Length': 100 }));
    stalled.write('{');
    await cut;
    const pong = new Promise((resolve) => events.socket.once('pong', resolve));
    events.socket.ping();
    await Promise.race([pong, events.closed.then(({ code }) => Promise.reject(new Error(`the socket was closed (${code})`)))]);
    expect(events.socket.readyState).toBe(events.socket.OPEN);
    events.close();
    await events.closed;
  });
});

describe('connections per client address', () => {
  it('holds MAX_CONNECTIONS_PER_ADDRESS from one address (a tenth of MAX_CONNECTIONS by default), WebSockets included: another address is still served', async () => {
    const limited = await startLoggedServer({ MAX_CONNECTIONS: '30' });
    try {
      const user = await client(limited.url).register();
      // One of the three places of 127.0.0.2 is an events WebSocket; its idle sockets get the two others.
      const events = await openEventSocket(limited.url, { token: user.accessToken, localAddress: '127.0.0.2' });
      const idle = await Promise.all(Array.from({ length: 30 }, () => openSocket(limited.url, '127.0.0.2')));
      const closed = idle.map((socket) => whenClosed(socket));
      let refused = 0;
      for (const ended of closed) void ended.then(() => (refused += 1));
      await waitUntil(async () => refused >= 28);

      const other = await openSocket(limited.url, '127.0.0.3');
      const answer = whenClosed(other);
      other.write(requestHead('GET', '/api/health', { Connection: 'close' }));
      expect(await answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(refused).toBe(28);
      expect((await Promise.all(closed.filter((_, i) => idle[i]!.destroyed))).every((received) => received === '')).toBe(true);
      const warning = await waitForLog(limited.output, (line) => line.level === 'warn' && /connections from one client address/.test(line.msg));
      expect(warning).toMatchObject({ clientAddress: '127.0.0.2', maxConnectionsPerAddress: 3 });
      events.close();
      for (const socket of idle) socket.destroy();
    } finally {
      await limited.stop();
    }
  });
});

describe('an answer sent before the request body was read', () => {
  const MiB = 1024 * 1024;
  const write = (socket: Socket, bytes: string | Buffer) => new Promise<void>((resolve, reject) => socket.write(bytes, (error) => (error ? reject(error) : resolve())));
  const json = { 'Content-Type': 'application/json' };
  /** Each refusal: its head, the part of the body sent before the answer, the rest, sent after it. */
  const refusals = () => {
    const form = multipartUpload({ cutId: randomUUID() }, 'take.mp3', MiB);
    const take = sampleBytes('mp3', MiB);
    const tus = { Authorization: `Bearer ${token}`, 'Tus-Resumable': '1.0.0', 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': 0 };
    return [
      // A form naming a cut that does not exist: 404 on its field, before a byte of its file is read.
      { status: 404, head: requestHead('POST', '/api/files/upload', { Authorization: `Bearer ${token}`, 'Content-Type': form.contentType, 'Content-Length': form.contentLength }), before: [form.head, take.subarray(0, 64 * 1024)], after: [take.subarray(64 * 1024), form.tail] },
      // A JSON body over 1 MiB: 413 as soon as the limit is crossed.
      { status: 413, head: requestHead('POST', '/api/auth/login', { ...json, 'Content-Length': 2 * MiB }), before: [Buffer.alloc(1.5 * MiB, 32)], after: [Buffer.alloc(0.5 * MiB, 32)] },
      // A resumable PATCH of an upload that does not exist.
      { status: 404, head: requestHead('PATCH', `/api/uploads/${randomUUID()}`, { ...tus, 'Content-Length': MiB }), before: [take.subarray(0, 64 * 1024)], after: [take.subarray(64 * 1024)] },
    ];
  };

  it('reads and drops the rest of the body, so the client sees the answer and its connection carries the next request', async () => {
    for (const refusal of refusals()) {
      const socket = await openSocket(server.url);
      const answers = answersOn(socket);
      await write(socket, refusal.head);
      for (const part of refusal.before) await write(socket, part);
      const answer = await answers.next();
      expect(answer.status, refusal.head.split('\r\n')[0]).toBe(refusal.status);
      expect(answer.headers.connection).not.toBe('close');
      // Sent after the whole answer arrived: the server is still reading.
      for (const part of refusal.after) await write(socket, part);
      await write(socket, requestHead('GET', '/api/health', {}));
      expect((await answers.next()).status).toBe(200);
      socket.destroy();
    }
  });

  it('closes the connection of a client that goes on sending more than 8 MiB after the answer', async () => {
    const socket = await openSocket(server.url);
    const answers = answersOn(socket);
    const closed = whenClosed(socket);
    await write(socket, requestHead('POST', '/api/auth/login', { ...json, 'Content-Length': 64 * MiB }));
    await write(socket, Buffer.alloc(1.5 * MiB, 32));
    expect((await answers.next()).status).toBe(413);
    let sent = 0;
    const chunk = Buffer.alloc(MiB, 32);
    while (sent < 62 * MiB && !socket.destroyed) {
      const written = await write(socket, chunk).then(() => true, () => false);
      if (written) sent += chunk.length;
      else break;
    }
    await closed;
    expect(sent).toBeGreaterThan(4 * MiB);
    expect(sent).toBeLessThan(62 * MiB);
  });
});

describe('a client that goes away mid-request', () => {
  it('resetting in the middle of a JSON body is logged at info, not as a database failure', async () => {
    const requestId = `reset-json-${randomUUID()}`;
    const socket = await openSocket(server.url);
    // The server answers 100 Continue as it hands the request to the app: the reset comes mid-request.
    const handedOver = new Promise((resolve) => socket.once('data', resolve));
    socket.write(
      requestHead('POST', '/api/auth/login', {
        'Content-Type': 'application/json',
        'Content-Length': 100,
        Expect: '100-continue',
        'X-Request-Id': requestId,
      }),
    );
    expect(String(await handedOver)).toMatch(/^HTTP\/1\.1 100 /);
    socket.write('{"email": "someone@example.com"');
    socket.resetAndDestroy();
    const logged = await waitForLog(server.output, (line) => line.reqId === requestId);
    expect(logged.level).toBe('info');
    expect(errorLines()).toEqual([]);
  });

  it('resetting in the middle of an upload is logged at info and its partial file is removed', async () => {
    const requestId = `reset-upload-${randomUUID()}`;
    const { socket } = await startUpload(requestId, 1024 * 1024);
    socket.resetAndDestroy();
    const logged = await waitForLog(server.output, (line) => line.reqId === requestId);
    expect(logged.level).toBe('info');
    await waitUntil(async () => (await tempFiles()).length === 0);
    expect(errorLines()).toEqual([]);
  });

  it('cutting off a resumable PATCH mid-body is logged at info, and what arrived is kept', async () => {
    const requestId = `cut-patch-${randomUUID()}`;
    const tus = { 'Tus-Resumable': '1.0.0' };
    const filename = Buffer.from('take.wav').toString('base64');
    const created = await client(server.url).request('POST', '/api/uploads', {
      token,
      headers: { ...tus, 'Upload-Length': String(64 * 1024), 'Upload-Metadata': `cutId ${Buffer.from(cutId).toString('base64')},filename ${filename}` },
    });
    expect(created.status, created.text).toBe(201);
    const uploadPath = new URL(created.headers.get('location')!, server.url).pathname;
    const socket = await openSocket(server.url);
    socket.write(
      requestHead('PATCH', uploadPath, {
        Authorization: `Bearer ${token}`,
        ...tus,
        'Content-Type': 'application/offset+octet-stream',
        'Upload-Offset': 0,
        'Content-Length': 64 * 1024,
        'X-Request-Id': requestId,
      }),
    );
    // Handed to the kernel before the close: loopback delivers these bytes, then the end of the stream.
    await new Promise<void>((resolve, reject) => socket.write(sampleBytes('wav', 16 * 1024), (error) => (error ? reject(error) : resolve())));
    socket.destroy();
    const logged = await waitForLog(server.output, (line) => line.reqId === requestId);
    expect(logged.level).toBe('info');
    // The log line comes as the socket closes; the PATCH then records what arrived.
    const offset = async () => (await client(server.url).request('HEAD', uploadPath, { token, headers: tus })).headers.get('upload-offset');
    await waitUntil(async () => (await offset()) === String(16 * 1024));
    expect(errorLines()).toEqual([]);
  });

  it('resetting in the middle of a download is logged at info', async () => {
    const requestId = `reset-download-${randomUUID()}`;
    const socket = await openSocket(server.url);
    socket.write(requestHead('GET', `/api/files/${largeFileId}/download`, { Authorization: `Bearer ${token}`, 'X-Request-Id': requestId }));
    await new Promise((resolve) => socket.once('data', resolve));
    socket.resetAndDestroy();
    const logged = await waitForLog(server.output, (line) => line.reqId === requestId);
    expect(logged.level).toBe('info');
    expect(errorLines()).toEqual([]);
  });
});
