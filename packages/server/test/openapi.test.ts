import { afterAll, beforeAll, expect, it } from 'vitest';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let document: { openapi: string; paths: Record<string, Record<string, unknown>> };

beforeAll(async () => {
  server = await startTestServer();
  document = (await client(server.url).request('GET', '/api/openapi.json')).body;
});
afterAll(() => server?.close());

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
/** `GET /api/projects/:id` and `get /api/projects/{id}` both become `GET /api/projects/{}`. */
const shape = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/:[A-Za-z]+|\{[A-Za-z]+\}|\*/g, '{}')}`;

const documented = () =>
  new Set(Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).filter((key) => METHODS.includes(key)).map((method) => shape(method, path))));
const registered = () =>
  new Set(
    server.routes.filter((route) => !route.startsWith('HEAD ')).map((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return shape(method, path);
    }),
  );

it('is OpenAPI 3.1', () => {
  expect(document.openapi).toBe('3.1.0');
});

it('describes every route the server registers', () => {
  const described = documented();
  expect([...registered()].filter((route) => !described.has(route))).toEqual([]);
});

it('describes only routes the server has', () => {
  const routes = registered();
  // The WebSocket endpoint is served by the HTTP server's upgrade handler, not by a route.
  expect([...documented()].filter((route) => route !== 'GET /api/events' && !routes.has(route))).toEqual([]);
});
