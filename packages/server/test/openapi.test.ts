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

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head'];
/** `/api/projects/:id` and `/api/projects/{id}` both become `/api/projects/{}`. */
const shape = (path: string) => path.replace(/:[A-Za-z]+|\{[A-Za-z]+\}|\*/g, '{}');

it('is OpenAPI 3.1', () => {
  expect(document.openapi).toBe('3.1.0');
});

it('describes every route the server registers', () => {
  const described = new Set(
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).filter((key) => METHODS.includes(key)).map((method) => `${method.toUpperCase()} ${shape(path)}`),
    ),
  );
  const undocumented = server.routes
    .filter((route) => !route.startsWith('HEAD '))
    .map((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return `${method} ${shape(path)}`;
    })
    .filter((route) => !described.has(route));
  expect(undocumented).toEqual([]);
});
