import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandApiError, BandClient, BandNetworkError } from '../src/index.js';
import { registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('RequestOptions, the last argument of every resource method', () => {
  it('headers: sent with the call (the server takes a sane X-Request-Id as its own), beside the credentials', async () => {
    const { client } = await registeredClient(server.url);
    const error = await client.projects.get('00000000-0000-4000-8000-000000000000', { headers: { 'x-request-id': 'sdk-options-1' } }).catch((e) => e);
    expect(error).toBeInstanceOf(BandApiError);
    expect(error).toMatchObject({ status: 404, requestId: 'sdk-options-1' });
    expect(await client.auth.me({ headers: { 'x-request-id': 'sdk-options-2' } })).toMatchObject({ email: expect.any(String) });
  });

  it('signal: an aborted call rejects with the abort and changes nothing', async () => {
    const { client } = await registeredClient(server.url);
    const controller = new AbortController();
    controller.abort();
    await expect(client.projects.create({ name: 'Never' }, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    await expect(client.files.download('00000000-0000-4000-8000-000000000000', { to: new PassThrough() }, { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(await client.projects.list()).toEqual([]);
  });

  it('withResponse(): any call gives its value beside the response (status, headers); awaited alone, the value', async () => {
    const { client } = await registeredClient(server.url);
    const created = await client.projects.create({ name: 'Raw' }, { headers: { 'x-request-id': 'sdk-raw-1' } }).withResponse();
    expect(created.response.status).toBe(201);
    expect(created.response.headers.location).toBe(`/api/projects/${created.data.id}`);
    expect(created.response.headers['x-request-id']).toBe('sdk-raw-1');
    const listed = await client.projects.list().withResponse();
    expect(listed).toMatchObject({ data: [{ id: created.data.id }], response: { status: 200 } });
    expect(await client.projects.get(created.data.id)).toMatchObject({ name: 'Raw' });
    const failed = await client.projects.get('00000000-0000-4000-8000-000000000000').withResponse().catch((e) => e);
    expect(failed).toBeInstanceOf(BandApiError);
    expect(failed).toMatchObject({ status: 404 });
  });

  it('timeoutMs and retries: override the client for one call', async () => {
    const silent = await silentServer();
    try {
      const client = new BandClient({ baseUrl: silent.url, timeoutMs: 60_000 });
      const error = await client.projects.list({ timeoutMs: 200, retries: 0 }).catch((e) => e);
      expect(error).toBeInstanceOf(BandNetworkError);
      expect(error.cause).toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
      expect(silent.requests()).toBe(1);
      await client.projects.list({ timeoutMs: 200, retries: 1 }).catch(() => undefined);
      expect(silent.requests()).toBe(3);
    } finally {
      await silent.close();
    }
  });
});

/** A peer that accepts requests and never answers: what a hung server looks like to a client. */
async function silentServer() {
  let count = 0;
  const peer = http.createServer(() => {
    count += 1;
  });
  await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(peer.address() as AddressInfo).port}`,
    requests: () => count,
    close: async () => {
      peer.closeAllConnections();
      await new Promise<void>((resolve) => peer.close(() => resolve()));
    },
  };
}
