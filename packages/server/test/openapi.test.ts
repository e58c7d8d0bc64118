import { ROUTES } from '@bandcollab/sdk/contract';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let document: { openapi: string; paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };

beforeAll(async () => {
  server = await startTestServer();
  document = (await client(server.url).request('GET', '/api/openapi.json')).body;
});
afterAll(() => server?.close());

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options'];
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

it('is a valid OpenAPI 3.1 document whose references all resolve', async () => {
  expect(document.openapi).toBe('3.1.0');
  const result = await new Validator().validate(structuredClone(document) as Record<string, unknown>);
  expect(result.errors ?? []).toEqual([]);
  expect(result.valid).toBe(true);
});

it('describes every route the server registers', () => {
  const described = documented();
  expect([...registered()].filter((route) => !described.has(route))).toEqual([]);
});

it('is generated from the route declarations, each of which the server registers (the events WebSocket is an upgrade)', () => {
  // HEAD is left out as `registered` leaves it out: tinyhttp lists a GET route's HEAD beside it.
  const declared = Object.values(ROUTES).filter((route) => route.method !== 'HEAD').map((route) => shape(route.method, route.path));
  expect(new Set(declared)).toEqual(documented());
  const routes = registered();
  expect(declared.filter((route) => route !== 'GET /api/events' && !routes.has(route))).toEqual([]);
});

it('describes only routes the server has', () => {
  const routes = registered();
  // The WebSocket endpoint is served by the HTTP server's upgrade handler, not by a route.
  expect([...documented()].filter((route) => route !== 'GET /api/events' && !routes.has(route))).toEqual([]);
});

/** Every operation of the document, with the parameters of its path item. */
const operations = () =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([key]) => METHODS.includes(key))
      .map(([method, operation]) => ({ label: `${method.toUpperCase()} ${path}`, path, operation, parameters: [...(item.parameters ?? []), ...(operation.parameters ?? [])] })),
  );

it('gives every JSON body its 400 (INVALID_JSON, VALIDATION_FAILED), 413 and 415, as the server answers them', () => {
  for (const { label, operation } of operations()) {
    if (!operation.requestBody?.content?.['application/json']) continue;
    expect(Object.keys(operation.responses), label).toEqual(expect.arrayContaining(['400', '413', '415']));
  }
});

it('gives every authenticated operation a 401 and every 401 its WWW-Authenticate header', () => {
  for (const { label, operation } of operations()) {
    const authenticated = Array.isArray(operation.security) && operation.security.length > 0 && !operation.security.some((s: object) => Object.keys(s).length === 0);
    if (authenticated) expect(operation.responses['401'], label).toBeDefined();
    if (operation.responses['401']) expect(operation.responses['401'].headers?.['WWW-Authenticate'], label).toBeDefined();
  }
});

it('gives every operation with a path id a 404, every 201 a Location, every error the Problem schema', () => {
  for (const { label, operation, parameters } of operations()) {
    if (parameters.some((parameter: { in: string }) => parameter.in === 'path')) expect(operation.responses['404'], label).toBeDefined();
    if (operation.responses['201']) expect(operation.responses['201'].headers?.Location, label).toBeDefined();
    for (const [status, response] of Object.entries<any>(operation.responses)) {
      if (Number(status) >= 400 && response.content?.['application/problem+json']) {
        expect(response.content['application/problem+json'].schema, `${label} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
      }
    }
  }
  expect(document.components.schemas.Problem.required).toEqual(['type', 'title', 'status', 'detail', 'code', 'requestId']);
});
