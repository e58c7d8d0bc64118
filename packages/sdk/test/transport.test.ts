import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandApiError, BandClient, BandNetworkError } from '../src/index.js';
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

  it('sends a POST again only after a 429 (refused before any work), never after a 503', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const { client } = await registeredClient(gateway.url, { dispatcher });
    gateway.failNext({ status: 429, retryAfter: '1' });
    expect((await client.projects.create({ name: 'After a refusal' })).name).toBe('After a refusal');
    expect(requests.filter((r) => r === 'POST /api/projects')).toHaveLength(2);
    gateway.failNext(503);
    await expect(client.projects.create({ name: 'Unknown fate' })).rejects.toMatchObject({ status: 503 });
    expect(requests.filter((r) => r === 'POST /api/projects')).toHaveLength(3);
    gateway.reset();
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

  it('does not wait out a Retry-After longer than its cap: the error carries retryAfter', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const { client } = await registeredClient(gateway.url, { dispatcher });
    gateway.failNext({ status: 503, retryAfter: '120' });
    await expect(client.projects.list()).rejects.toMatchObject({ status: 503, retryAfter: 120 });
    // Waiting it out would have sent the call again (and outlasted the test's timeout).
    expect(requests.filter((r) => r === 'GET /api/projects')).toHaveLength(1);
  });

  it('never retries a create: a 503 on POST surfaces at once', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const { client } = await registeredClient(gateway.url, { dispatcher });
    gateway.failNext(503);
    await expect(client.projects.create({ name: 'Once' })).rejects.toMatchObject({ status: 503 });
    expect(requests.filter((r) => r === 'POST /api/projects')).toHaveLength(1);
    expect(await client.projects.list()).toEqual([]);
  });

  it('never resends an upload whose connection was reset, and says the server may have refused it', async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const { client } = await registeredClient(gateway.url, { dispatcher });
    const project = await client.projects.create({ name: 'Reset' });
    const vibe = await client.vibes.create(project.id, { name: 'V' });
    const cut = await client.cuts.create(vibe.id, { name: 'C' });
    gateway.failNext('reset');
    const file = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(8 * 1024 * 1024)]);
    // A multipart upload (a resumable one asks for the offset and continues: resumable.test.ts).
    const error = await client.files.upload({ cutId: cut.id, file, filename: 'a.mp3', resumable: false }).catch((e) => e);
    expect(error).toBeInstanceOf(BandNetworkError);
    expect(error.message).toMatch(/before the server answered: it may have refused the file or be restarting/);
    expect(requests.filter((r) => r === 'POST /api/files/upload')).toHaveLength(1);
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
    expect(error).toBeInstanceOf(BandNetworkError);
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

type Fault = number | 'hang' | 'reset' | { status: number; retryAfter?: string; body?: string };

interface Gateway {
  url: string;
  /** The next requests get these answers instead of reaching the server. */
  failNext(...faults: Fault[]): void;
  faults(): number;
  reset(): void;
  close(): Promise<void>;
}

/** A reverse proxy on loopback in front of the real server that can answer like a failing gateway. */
async function startGateway(target: URL): Promise<Gateway> {
  let planned: Fault[] = [];
  const hanging = new Set<http.ServerResponse>();
  const proxy = http.createServer((req, res) => {
    const fault = planned.shift();
    if (fault === 'hang') {
      hanging.add(res);
      return;
    }
    if (fault === 'reset') {
      req.socket.resetAndDestroy();
      return;
    }
    if (fault !== undefined) {
      const { status, retryAfter, body } = typeof fault === 'number' ? { status: fault } : fault;
      req.resume();
      res.writeHead(status, { 'content-type': 'text/html', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
      res.end(body ?? '');
      return;
    }
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
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
