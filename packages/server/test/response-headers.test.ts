/**
 * The headers every response carries: `nosniff` on every response, `Referrer-Policy: no-referrer` on pages (on every
 * response, in fact), `Cache-Control: no-store` on every JSON answer, while file bytes keep their validators.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedProject } from './authz/fixture.js';
import { refusedUpgrade } from './support/event-socket.js';
import { sampleBytes, upload } from './support/files.js';
import { client, type TestResponse } from './support/http.js';
import { openSocket, requestHead, whenClosed } from './support/raw-http.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let token: string;
let fileId: string;
let shareToken: string;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
  token = (await api.register()).accessToken;
  const { cutId } = await seedProject(api, token);
  fileId = (await upload(api, token, cutId, 'take.mp3', sampleBytes('mp3', 2048))).body.id;
  shareToken = (await api.request('POST', `/api/files/${fileId}/share`, { token, json: {} })).body.token;
});
afterAll(() => server?.close());

function expectCommonHeaders(response: TestResponse, label: string) {
  expect(response.headers.get('x-content-type-options'), label).toBe('nosniff');
  expect(response.headers.get('referrer-policy'), label).toBe('no-referrer');
}

describe('every response', () => {
  it('carries nosniff and no-referrer: records, errors, unknown routes, pages, files, the OpenAPI document', async () => {
    const answers: Array<[string, Promise<TestResponse>]> = [
      ['a record', api.request('GET', '/api/auth/me', { token })],
      ['health', api.request('GET', '/api/health')],
      ['the OpenAPI document', api.request('GET', '/api/openapi.json')],
      ['a 401', api.request('GET', '/api/projects')],
      ['a 400', api.request('POST', '/api/projects', { token, json: {} })],
      ['an unknown route', api.request('GET', '/api/nothing-here')],
      ['an undecodable path', api.request('GET', '/api/projects/%zz')],
      ['the share page', api.request('GET', `/share/${shareToken}`)],
      ['the share page of an unknown link', api.request('GET', '/share/unknown')],
      ['file bytes', api.request('GET', `/api/files/${fileId}/download`, { token })],
      ['shared bytes', api.request('GET', `/api/share/${shareToken}`)],
    ];
    for (const [label, answer] of answers) expectCommonHeaders(await answer, label);
  });

  it('includes a refused WebSocket upgrade, and a malformed handshake', async () => {
    const refusal = await refusedUpgrade(server.url, {});
    expect(refusal.status).toBe(401);
    expect(refusal.headers['x-content-type-options']).toBe('nosniff');

    const socket = await openSocket(server.url);
    const answer = whenClosed(socket);
    socket.write(requestHead('GET', '/api/events', { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Version': '13', Authorization: `Bearer ${token}` }));
    const [head, body] = (await answer).split('\r\n\r\n') as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
    expect(head).toMatch(/\r\nContent-Type: application\/problem\+json/i);
    expect(JSON.parse(body)).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'handshake', message: 'Missing or invalid Sec-WebSocket-Key header' }] });
  });
});

describe('Cache-Control', () => {
  it('is no-store on every JSON answer: records, lists, errors, public JSON', async () => {
    const answers: Array<[string, Promise<TestResponse>]> = [
      ['a record', api.request('GET', '/api/auth/me', { token })],
      ['a list', api.request('GET', '/api/projects', { token })],
      ['a created record', api.request('POST', '/api/projects', { token, json: { name: 'Cached?' } })],
      ['a 401', api.request('GET', '/api/projects')],
      ['a 404', api.request('GET', '/api/nothing-here')],
      ['a share link as JSON', api.request('GET', `/api/share/${shareToken}`, { headers: { accept: 'application/json' } })],
      ['health', api.request('GET', '/api/health')],
    ];
    for (const [label, answer] of answers) {
      const response = await answer;
      expect(response.headers.get('content-type'), label).toMatch(/json/);
      expect(response.headers.get('cache-control'), label).toBe('no-store');
    }
  });

  it('leaves file bytes revalidatable: private, no-cache with an ETag, and 304 on a match', async () => {
    const first = await api.request('GET', `/api/files/${fileId}/download`, { token });
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    const etag = first.headers.get('etag')!;
    expect(etag).toBeTruthy();
    const again = await api.request('GET', `/api/files/${fileId}/download`, { token, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });
});
