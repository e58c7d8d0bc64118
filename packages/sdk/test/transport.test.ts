import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { Agent, buildConnector } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandAbortError, BandApiError, BandClient, BandConnectionError, BandNetworkError, BandTimeoutError } from '../src/index.js';
import { PASSWORD, recordingDispatcher, registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;
let gateway: Gateway;

beforeAll(async () => {
  server = await startTestServer({ LOGIN_MAX_FAILURES: '2' });
  gateway = await startGateway(new URL(server.url));
});
afterAll(async () => {
  await gateway?.close();
  await server?.close();
});

describe('retries', () => {
  it('retries a GET (default: twice) after 502/504 and a 429 with Retry-After, then answers', async () => {
    const { client } = await registeredClient(gateway.url);
    gateway.failNext(502, 504);
    expect(await client.projects.list()).toEqual([]);
    gateway.failNext({ status: 429, retryAfter: '1' });
    const started = Date.now();
    expect(await client.projects.list()).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(gateway.faults()).toBe(0);
  });

  it('sends a create again after a 429 or a 503 with the same Idempotency-Key: one record each', async () => {
    const { client } = await registeredClient(gateway.url);
    gateway.failNext({ status: 429, retryAfter: '1' });
    expect((await client.projects.create({ name: 'After a refusal' })).name).toBe('After a refusal');
    gateway.failNext(503);
    expect((await client.projects.create({ name: 'After an outage' })).name).toBe('After an outage');
    const creates = gateway.seen().filter((r) => r.startsWith('POST /api/projects '));
    expect(creates).toHaveLength(4);
    expect(creates[0]).toMatch(/^POST \/api\/projects [0-9a-f-]{36}$/);
    expect(creates[1]).toBe(creates[0]);
    expect(creates[3]).toBe(creates[2]);
    expect(creates[2]).not.toBe(creates[0]);
    expect((await client.projects.list()).map((p) => p.name).sort()).toEqual(['After a refusal', 'After an outage']);
  });

  it('gives up after `retries` attempts with the last answer as a typed error', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const { client } = await registeredClient(gateway.url, { dispatcher, retries: 1 });
    gateway.failNext(503, 503, 503);
    const error = await client.projects.list().catch((e) => e);
    expect(error).toBeInstanceOf(BandApiError);
    expect(error).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
    expect(requests.filter((r) => r === 'GET /api/projects')).toHaveLength(2);
    gateway.reset();
  });

  it('surfaces the server\'s last answer when the retries after it find no server (a 503 while shutting down)', async () => {
    const { client } = await registeredClient(gateway.url);
    gateway.failNext({ status: 503, retryAfter: '1', body: 'shutting down' }, 'reset', 'reset');
    const error = await client.projects.list().catch((e) => e);
    expect(error).toBeInstanceOf(BandApiError);
    expect(error).toMatchObject({ status: 503, retryAfter: 1, detail: 'shutting down' });
    expect(gateway.faults()).toBe(0);
  });

  it('does not wait out a Retry-After longer than its cap: the error carries retryAfter', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const { client } = await registeredClient(gateway.url, { dispatcher });
    gateway.failNext({ status: 503, retryAfter: '120' });
    await expect(client.projects.list()).rejects.toMatchObject({ status: 503, retryAfter: 120 });
    // Waiting it out would have sent the call again (and outlasted the test's timeout).
    expect(requests.filter((r) => r === 'GET /api/projects')).toHaveLength(1);
  });

  it('sends a create whose answer was lost again with the same key: the server replays its answer, one record', async () => {
    const { client } = await registeredClient(gateway.url);
    gateway.failNext('drop');
    const { data, response } = await client.projects.create({ name: 'Lost answer' }).withResponse();
    expect(data.name).toBe('Lost answer');
    expect(response.status).toBe(201);
    expect(response.headers['idempotent-replayed']).toBe('true');
    const creates = gateway.seen().filter((r) => r.startsWith('POST /api/projects '));
    expect(creates.slice(-2)[0]).toBe(creates.slice(-1)[0]);
    expect((await client.projects.list()).map((p) => p.id)).toEqual([data.id]);
  });

  it('20 parallel calls with one Idempotency-Key create one record and all answer it', async () => {
    const { client } = await registeredClient(server.url);
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, () => client.projects.create({ name: 'Once only' }, { headers: { 'Idempotency-Key': key } })));
    const [project] = await client.projects.list();
    expect(new Set(answers.map((p) => p.id))).toEqual(new Set([project!.id]));
    expect(await client.projects.list()).toHaveLength(1);
  });

  it('sends an upload from a path whose answer was lost again, re-reading the file: stored once', async () => {
    const { client } = await registeredClient(gateway.url);
    const cut = await newCut(client);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sdk-retry-'));
    const file = path.join(dir, 'take.mp3');
    await writeFile(file, Buffer.concat([Buffer.from('ID3'), Buffer.alloc(256 * 1024, 7)]));
    try {
      gateway.failNext('drop');
      const record = await client.files.upload({ cutId: cut.id, file, resumable: false });
      expect(record.size).toBe(256 * 1024 + 3);
      const uploads = gateway.seen().filter((r) => r.startsWith('POST /api/files/upload '));
      expect(uploads).toHaveLength(2);
      expect(uploads[1]).toBe(uploads[0]);
      expect((await client.cuts.get(cut.id)).files.map((f) => f.id)).toEqual([record.id]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('sends an upload from bytes again after a reset connection: stored once', async () => {
    const { client } = await registeredClient(gateway.url);
    const cut = await newCut(client);
    gateway.failNext('reset');
    const record = await client.files.upload({ cutId: cut.id, file: Buffer.concat([Buffer.from('ID3'), Buffer.alloc(1024 * 1024)]), filename: 'a.mp3', resumable: false });
    expect((await client.cuts.get(cut.id)).files.map((f) => f.id)).toEqual([record.id]);
  });

  it('sends a one-shot stream again when none of it was read: its first connection was refused', async () => {
    const { client: owner } = await registeredClient(server.url);
    const cut = await newCut(owner);
    let refusals = 1;
    const connect = buildConnector({});
    const dispatcher = new Agent({
      connect: (options, callback) => {
        if (refusals-- > 0) callback(Object.assign(new Error(`connect ECONNREFUSED ${options.hostname}`), { code: 'ECONNREFUSED' }), null);
        else connect(options, callback);
      },
    });
    const client = new BandClient({ baseUrl: server.url, ...owner.sessionTokens, dispatcher });
    const file = Readable.from([Buffer.from('ID3'), Buffer.alloc(64 * 1024)]);
    const record = await client.files.upload({ cutId: cut.id, file, filename: 'a.mp3' });
    expect(refusals).toBe(-1);
    expect(record.size).toBe(64 * 1024 + 3);
    expect((await owner.cuts.get(cut.id)).files.map((f) => f.id)).toEqual([record.id]);
  });

  it('never resends a one-shot stream once any of it was sent, and says the server may have refused it', async () => {
    const { client } = await registeredClient(gateway.url);
    const cut = await newCut(client);
    const before = gateway.seen().length;
    gateway.failNext('reset');
    const file = Readable.from([Buffer.from('ID3'), Buffer.alloc(8 * 1024 * 1024)]);
    const error = await client.files.upload({ cutId: cut.id, file, filename: 'a.mp3' }).catch((e) => e);
    expect(error).toBeInstanceOf(BandConnectionError);
    expect(error.message).toMatch(/before the server answered: it may have refused the file or be restarting/);
    expect(gateway.seen().slice(before).filter((r) => r.startsWith('POST /api/files/upload '))).toHaveLength(1);
    expect((await client.cuts.get(cut.id)).files).toEqual([]);
  });

  it('reports 429 RATE_LIMITED on login with retryAfter, without retrying it', async () => {
    const client = new BandClient({ baseUrl: server.url });
    const { email } = await registeredClient(server.url);
    const attempts = [];
    for (let i = 0; i < 3; i += 1) attempts.push(await client.auth.login({ email, password: `${PASSWORD}!` }).catch((e) => e));
    expect(attempts.map((e) => e.code)).toEqual(['INVALID_CREDENTIALS', 'INVALID_CREDENTIALS', 'RATE_LIMITED']);
    expect(attempts[2].retryAfter).toBeGreaterThan(0);
  });
});

describe('timeouts and failures', () => {
  it('turns a server that never answers into a network error after timeoutMs', async () => {
    const { client } = await registeredClient(gateway.url, { timeoutMs: 300, retries: 0 });
    gateway.failNext('hang');
    const error = await client.projects.list().catch((e) => e);
    expect(error).toBeInstanceOf(BandTimeoutError);
    expect(error).not.toBeInstanceOf(BandAbortError);
    expect(error.cause).toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
  });

  it('reads a non-JSON error page into a typed error', async () => {
    const { client } = await registeredClient(gateway.url, { retries: 0 });
    gateway.failNext({ status: 502, body: '<html>Bad gateway</html>' });
    await expect(client.projects.list()).rejects.toMatchObject({ status: 502, code: 'UNAVAILABLE', detail: '<html>Bad gateway</html>' });
  });

  it('honours an AbortSignal while waiting to retry', async () => {
    const { client } = await registeredClient(gateway.url);
    gateway.failNext({ status: 503, retryAfter: '5' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await expect(client.files.download('00000000-0000-4000-8000-000000000000', { to: new PassThrough(), signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(2000);
    gateway.reset();
  });
});

describe('typed errors', () => {
  it('BandApiError: an error answer, with its status, code, request id, field errors and Retry-After', async () => {
    const { client } = await registeredClient(server.url);
    const error = await client.projects.create({ name: ' ' }).catch((e) => e);
    expect(error).toBeInstanceOf(BandApiError);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', requestId: expect.stringMatching(/\S/), retryAfter: null });
    expect(error.errors).toEqual([expect.objectContaining({ field: 'name' })]);
  });

  it('BandConnectionError: nothing listens at the address', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await new BandClient({ baseUrl: `http://127.0.0.1:${port}`, retries: 0 }).health().catch((e) => e);
    expect(error).toBeInstanceOf(BandConnectionError);
    expect(error).toBeInstanceOf(BandNetworkError);
    expect(error.cause).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('BandAbortError: the caller aborted a call in flight (not a timeout), with the signal\'s reason as its cause', async () => {
    const { client } = await registeredClient(gateway.url, { timeoutMs: 60_000 });
    gateway.failNext('hang');
    const controller = new AbortController();
    const received = gateway.nextRequest();
    const call = client.projects.list({ signal: controller.signal }).catch((e) => e);
    await received;
    const reason = new Error('the user pressed Ctrl-C');
    controller.abort(reason);
    const error = await call;
    expect(error).toBeInstanceOf(BandAbortError);
    expect(error).not.toBeInstanceOf(BandTimeoutError);
    expect(error).toMatchObject({ name: 'AbortError', cause: reason });
  });
});

async function newCut(client: BandClient) {
  const project = await client.projects.create({ name: 'Retries' });
  const vibe = await client.vibes.create(project.id, { name: 'V' });
  return client.cuts.create(vibe.id, { name: 'C' });
}

/**
 * `hang`: never answers; `reset`: resets the connection on receipt; `drop`: forwards the request, lets the server
 * answer, then closes the client's connection without that answer (the work was done, the caller cannot know).
 */
type Fault = number | 'hang' | 'reset' | 'drop' | { status: number; retryAfter?: string; body?: string };

interface Gateway {
  url: string;
  /** The next requests get these answers instead of reaching the server. */
  failNext(...faults: Fault[]): void;
  faults(): number;
  /** `METHOD path key` of every request that reached the gateway, the key being its Idempotency-Key or `-`. */
  seen(): string[];
  /** Resolves when the next request reaches the gateway. */
  nextRequest(): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

/** A reverse proxy on loopback in front of the real server that can answer like a failing gateway. */
async function startGateway(target: URL): Promise<Gateway> {
  let planned: Fault[] = [];
  const seen: string[] = [];
  const hanging = new Set<http.ServerResponse>();
  let arrived: Array<() => void> = [];
  const proxy = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers['idempotency-key'] ?? '-'}`);
    for (const resolve of arrived) resolve();
    arrived = [];
    const fault = planned.shift();
    if (fault === 'hang') {
      hanging.add(res);
      return;
    }
    if (fault === 'reset') {
      req.socket.resetAndDestroy();
      return;
    }
    if (fault !== undefined && fault !== 'drop') {
      const { status, retryAfter, body } = typeof fault === 'number' ? { status: fault } : fault;
      req.resume();
      res.writeHead(status, { 'content-type': 'text/html', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
      res.end(body ?? '');
      return;
    }
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (fault === 'drop') {
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    failNext: (...faults) => planned.push(...faults),
    faults: () => planned.length,
    seen: () => [...seen],
    nextRequest: () => new Promise<void>((resolve) => arrived.push(resolve)),
    reset: () => {
      planned = [];
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
