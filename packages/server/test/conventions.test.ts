/**
 * The API conventions, checked on every route the server registers (not a sample): a path id that is
 * not a UUID is 404, a JSON body that is malformed, too large or of another type is 400/413/415, every
 * error is problem details carrying the request id, every 401 names the Bearer scheme, and every other
 * spelling of a path is 404 for every method, logged and answered with its request id.
 */
import { Agent } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { type RouteDeclaration, ROUTES } from '@bandcollab/sdk/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, buildFixture, expectStatus, type Fixture, inviteToken, ISO_TIMESTAMP, PNG_BYTES } from './authz/fixture.js';
import { openEventSocket } from './support/event-socket.js';
import { sampleBytes, upload } from './support/files.js';
import type { TestResponse } from './support/http.js';
import { rawRequest } from './support/raw-http.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let fx: Fixture;
let fileId: string;
let memberId: string;
let jobId: string;
let invitationId: string;
let avatarName: string;
let shareId: string;
let tokenId: string;
let uploadId: string;
/** A cut in the trash: the trash routes' :kind/:id. */
let trashedCutId: string;
let commentId: string;
let feedbackToken: string;
let webhookId: string;
let deliveryId: string;
let invitationToken: string;

/** The server's log (it logs at info here): its JSON lines are kept from stdout, not printed. */
const logged: string[] = [];
const writeStdout = process.stdout.write;

beforeAll(async () => {
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    if (typeof chunk === 'string' && chunk.startsWith('{"time"')) {
      logged.push(chunk);
      return true;
    }
    return (writeStdout as (...args: unknown[]) => boolean).apply(process.stdout, [chunk, ...rest]);
  }) as typeof process.stdout.write;
  server = await startTestServer({ LOG_LEVEL: 'info' });
  fx = await buildFixture(server);
  fileId = (await expectStatus(upload(fx.api, fx.actors.projectAdmin.token!, fx.project.cutId, 'take.mp3', sampleBytes('mp3', 256)), 201)).id;
  memberId = await fx.newMember();
  jobId = await fx.newFailedJob();
  await expectStatus(fx.api.request('POST', `/api/files/${fileId}/share`, { token: fx.actors.projectAdmin.token }), 201);
  shareId = (await expectStatus(fx.api.request('GET', `/api/files/${fileId}/shares`, { token: fx.actors.projectAdmin.token }), 200))[0].id;
  const invited = await expectStatus(
    fx.api.request('POST', `/api/projects/${fx.project.id}/invite`, { token: fx.actors.projectAdmin.token, json: { email: 'listed@example.com', role: 'MEMBER' } }),
    201,
  );
  invitationId = invited.invitation.id;
  invitationToken = inviteToken(invited.inviteUrl);
  const avatar = new FormData();
  avatar.append('image', new Blob([new Uint8Array(PNG_BYTES)]), 'avatar.png');
  avatarName = (await expectStatus(fx.api.request('PUT', '/api/auth/me/avatar', { token: fx.actors.member.token, body: avatar }), 200)).avatarUrl.split('/').pop();
  tokenId = (
    await expectStatus(fx.api.request('POST', '/api/tokens', { token: fx.actors.projectAdmin.token, json: { name: 'Listed', scope: 'read', expiresIn: 3600 } }), 201)
  ).id;
  feedbackToken = (await expectStatus(fx.api.request('POST', `/api/files/${fileId}/share`, { token: fx.actors.projectAdmin.token, json: { allowComments: true } }), 201)).token;
  commentId = (await expectStatus(fx.api.request('POST', `/api/files/${fileId}/comments`, { token: fx.actors.projectAdmin.token, json: { body: 'Listed', atMs: 0 } }), 201)).id;
  // A public address needs no DNS; its deliveries, if the network has no route there, fail and retry later.
  webhookId = (
    await expectStatus(fx.api.request('POST', `/api/projects/${fx.project.id}/webhooks`, { token: fx.actors.projectAdmin.token, json: { url: 'https://93.184.215.14/hook', events: ['*'] } }), 201)
  ).id;
  deliveryId = (await expectStatus(fx.api.request('POST', `/api/webhooks/${webhookId}/test`, { token: fx.actors.projectAdmin.token }), 202)).id;
  const resumable = await fx.api.request('POST', '/api/uploads', {
    token: fx.actors.projectAdmin.token,
    headers: { 'tus-resumable': '1.0.0', 'upload-length': '256', 'upload-metadata': `cutId ${btoa(fx.project.cutId)},filename ${btoa('take.mp3')}` },
  });
  uploadId = resumable.headers.get('location')!.split('/').pop()!;
  trashedCutId = await fx.newCut();
  await expectStatus(fx.api.request('DELETE', `/api/cuts/${trashedCutId}`, { token: fx.actors.projectAdmin.token }), 200);
});
afterAll(async () => {
  await server?.close();
  process.stdout.write = writeStdout;
});

/** Every registered route but HEAD twins and the WebSocket upgrade (events.test.ts checks its refusals). */
const routes = () =>
  server.routes
    .filter((route) => !route.startsWith('HEAD ') && route !== 'GET /api/events')
    .map((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return { method, path };
    });

/** A route's path with every parameter filled by `value(segmentBefore, param)`. */
const fill = (path: string, value: (owner: string, param: string) => string) => {
  // A parameter's owner is the literal segment before it (`/api/trash/:kind/:id`: both the trash's).
  let owner = '';
  return path
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) return value(owner, segment.slice(1));
      owner = segment;
      return segment;
    })
    .join('/');
};

/** Real ids of the shared project, so only the body decides the answer (the caller is the project's ADMIN). */
const realId = (owner: string, param: string): string => {
  if (param === 'userId') return memberId;
  if (param === 'invitationId') return invitationId;
  // A feedback link takes comments, so its comment routes read their body; other links are unknown ones.
  if (param === 'token') return owner === 'share' ? feedbackToken : 'unknown-token';
  if (param === 'name' && owner === 'avatars') return avatarName;
  if (owner === 'trash') return param === 'kind' ? 'cut' : trashedCutId;
  if (param === 'name') return owner === 'images' ? fx.projectImageUrl.split('/').pop()! : `${fileId}.mp3`;
  // A STEM entry's index (the shared file is a CUT: it has none, a 404 like an unknown id).
  if (owner === 'entries') return '0';
  const ids: Record<string, string> = { projects: fx.project.id, vibes: fx.project.vibeId, cuts: fx.project.cutId, files: fileId, shares: shareId, tokens: tokenId, uploads: uploadId, comments: commentId, users: memberId, jobs: jobId, webhooks: webhookId, deliveries: deliveryId };
  const id = ids[owner];
  if (id === undefined) throw new Error(`no real id for /${owner}/:${param}`);
  return id;
};

/** The problem-details shape of the API, with the request id also in the header. */
function expectProblem(response: TestResponse, status: number, code: string) {
  expect(response.status, response.text).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const requestId = response.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  expect(response.body).toMatchObject({ type: 'about:blank', status, code, requestId });
  expect(typeof response.body.title).toBe('string');
  expect(typeof response.body.detail).toBe('string');
  expect('errors' in response.body).toBe(code === 'VALIDATION_FAILED');
}

describe('a path id that is not a UUID', () => {
  it('answers 404 NOT_FOUND on every route with an id, for each id of the path (never 500)', async () => {
    const withIds = routes().filter(({ path }) => /:(id|projectId|vibeId|userId)\b/.test(path));
    expect(withIds.length).toBeGreaterThan(10);
    for (const { method, path } of withIds) {
      for (const broken of path.match(/:\w+/g)!) {
        const response = await fx.api.request(method, fill(path, (owner, param) => (`:${param}` === broken ? 'not-a-uuid' : realId(owner, param))), {
          token: fx.actors.projectAdmin.token,
          ...(method === 'POST' || method === 'PUT' ? { json: {} } : {}),
        });
        expectProblem(response, 404, 'NOT_FOUND');
      }
    }
  });

  it('answers 404 problem details for an id that is not even valid percent-encoding', async () => {
    for (const path of ['/api/projects/%zz', '/api/vibes/%E0%A4%A', '/uploads/files/%zz.mp3', '/api/share/%']) {
      expectProblem(await fx.api.request('GET', path, { token: fx.actors.projectAdmin.token }), 404, 'NOT_FOUND');
    }
  });

  it('answers 404 on the media paths for names that are not <uuid>.<ext>', async () => {
    for (const path of ['/uploads/files/not-a-uuid.mp3', '/uploads/files/..%2F..%2Fetc%2Fpasswd', '/uploads/images/not-a-uuid.png', '/api/share/not-a-token']) {
      expectProblem(await fx.api.request('GET', path, { token: fx.actors.projectAdmin.token }), 404, 'NOT_FOUND');
    }
  });
});

describe('JSON bodies', () => {
  /** Routes that read a JSON body; the uploads and the avatar are multipart or tus bytes only and the IdP exchange and link answer 404 IDP_DISABLED here. */
  const MULTIPART_ONLY = new Set(['/api/files/upload', '/api/uploads', '/api/auth/me/avatar']);
  /** Routes whose declaration takes no body at all (resolving a comment). */
  const BODYLESS = new Set(
    Object.values(ROUTES as Record<string, RouteDeclaration>)
      .filter((route) => !route.request && !route.form)
      .map((route) => `${route.method} ${route.path}`),
  );
  const jsonRoutes = () =>
    routes().filter(
      ({ method, path }) =>
        (method === 'POST' || method === 'PUT') &&
        !MULTIPART_ONLY.has(path) &&
        !BODYLESS.has(`${method} ${path}`) &&
        path !== '/api/auth/idp/exchange' &&
        path !== '/api/auth/idp/link',
    );
  // Site administration answers only the site ADMIN, before reading a body.
  const send = (method: string, path: string, body: string, contentType: string) =>
    fx.api.request(method, fill(path, realId), {
      token: path.startsWith('/api/admin/') ? fx.actors.siteAdminNonMember.token : fx.actors.projectAdmin.token,
      body,
      headers: { 'content-type': contentType },
    });

  it('answer malformed JSON with 400 INVALID_JSON on every JSON endpoint', async () => {
    expect(jsonRoutes().length).toBeGreaterThan(10);
    for (const { method, path } of jsonRoutes()) {
      expectProblem(await send(method, path, '{"name": "x",', 'application/json'), 400, 'INVALID_JSON');
    }
  });

  it('answer a body over 1 MiB with 413 PAYLOAD_TOO_LARGE on every JSON endpoint', async () => {
    const huge = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
    for (const { method, path } of jsonRoutes()) {
      const response = await send(method, path, huge, 'application/json');
      expectProblem(response, 413, 'PAYLOAD_TOO_LARGE');
    }
  });

  it('answer another content type with 415 UNSUPPORTED_MEDIA_TYPE on every JSON endpoint', async () => {
    for (const { method, path } of jsonRoutes()) {
      expectProblem(await send(method, path, 'name=x', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('answer a body of another type than JSON with 415 on every route that takes no body, before anything changes', async () => {
    // A text/plain POST is what a cross-site form can send without a preflight: a route that takes no body must
    // not take that one either.
    const bodyless = routes().filter(
      ({ method, path }) =>
        method !== 'GET' &&
        method !== 'OPTIONS' &&
        BODYLESS.has(`${method} ${path}`) &&
        !MULTIPART_ONLY.has(path) &&
        !(Object.values(ROUTES as Record<string, RouteDeclaration>).find((route) => route.method === method && route.path === path)?.openapi?.requestBody),
    );
    expect(bodyless.length).toBeGreaterThan(5);
    for (const { method, path } of bodyless) {
      const response = await send(method, path, 'x', 'text/plain');
      expect([response.status, `${method} ${path}`]).toEqual([415, `${method} ${path}`]);
    }
  });

  it('never answer 500, whatever the values: wrong types, NUL, huge strings, deep nesting', async () => {
    const FIELDS = ['name', 'description', 'image', 'email', 'password', 'rememberMe', 'refreshToken', 'role', 'vibeIds', 'targetVibeId', 'expiresIn', 'code', 'redirectUri', 'token', 'inviteToken', 'body', 'atMs', 'endMs', 'parentId', 'mentions', 'state', 'note'];
    const values: unknown[] = [null, 0, -1, 1.5, 1e308, true, 'x', '', '\u0000', 'x'.repeat(100_000), [], ['\u0000'], [[[]]], {}, { $gt: '' }];
    for (const { method, path } of jsonRoutes()) {
      for (const value of values) {
        const body = JSON.stringify(Object.fromEntries(FIELDS.map((field) => [field, value])));
        const response = await send(method, path, body, 'application/json');
        expect(response.status, `${method} ${path} with ${JSON.stringify(value).slice(0, 20)}: ${response.text}`).toBeLessThan(500);
      }
      const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
      expect((await send(method, path, deep, 'application/json')).status).toBeLessThan(500);
    }
  });

  it('answer a body that is JSON but not an object with 400 VALIDATION_FAILED', async () => {
    for (const body of ['[]', '"text"', '42']) {
      expectProblem(await send('POST', '/api/projects', body, 'application/json'), 400, 'VALIDATION_FAILED');
    }
  });
});

describe('authentication failures', () => {
  /** Routes whose declaration needs credentials (the identity provider's answer 404 before that while it is off). */
  const AUTHENTICATED = new Set(
    Object.values(ROUTES as Record<string, RouteDeclaration>)
      .filter((route) => route.auth === 'session' || route.auth === 'read' || route.auth === 'write' || route.auth === 'review')
      .map((route) => `${route.method} ${route.path}`),
  );
  const protectedRoutes = () => routes().filter(({ method, path }) => AUTHENTICATED.has(`${method} ${path}`) && !path.includes('/idp'));

  it('answer every protected route without credentials with 401 UNAUTHENTICATED and WWW-Authenticate: Bearer', async () => {
    expect(protectedRoutes().length).toBeGreaterThan(20);
    for (const { method, path } of protectedRoutes()) {
      const response = await fx.api.request(method, fill(path, realId));
      expectProblem(response, 401, 'UNAUTHENTICATED');
      expect(response.headers.get('www-authenticate'), `${method} ${path}`).toMatch(/^Bearer\b/);
    }
  });

  it('take the access_token cookie only on media reads (download, archive, /uploads/*), never on other API routes', async () => {
    const cookie = `access_token=${fx.actors.projectAdmin.token}`;
    for (const { method, path } of protectedRoutes()) {
      const media = method === 'GET' && (path.startsWith('/uploads/') || path.endsWith('/download') || path.endsWith('/archive'));
      // A file's preview (§20) plays in an <audio> element too; the fixture's file has none (404 or 409), but not 401.
      const preview = method === 'GET' && path.endsWith('/preview');
      const response = await fx.api.request(method, fill(path, realId), { headers: { cookie } });
      if (preview) expect([404, 409], `${method} ${path}`).toContain(response.status);
      else expect(response.status, `${method} ${path}`).toBe(media ? 200 : 401);
    }
  });

  it('carry WWW-Authenticate: Bearer on every other 401 too', async () => {
    const wrongPassword = await fx.api.request('POST', '/api/auth/login', { json: { email: 'nobody@example.com', password: 'wrong password' } });
    expectProblem(wrongPassword, 401, 'INVALID_CREDENTIALS');
    expect(wrongPassword.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    const unknownRefresh = await fx.api.request('POST', '/api/auth/refresh', { json: { refreshToken: 'not-a-token' } });
    expectProblem(unknownRefresh, 401, 'INVALID_REFRESH_TOKEN');
    expect(unknownRefresh.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
  });
});

describe('names and descriptions', () => {
  /** Every request field that is a name or a description, as a JSON body (or multipart form) that changes only it. */
  const nameFields = () => {
    const admin = fx.actors.projectAdmin.token!;
    const form = (fields: Record<string, string>) => {
      const body = new FormData();
      for (const [key, value] of Object.entries(fields)) body.append(key, value);
      return body;
    };
    const upload = (name: string) => {
      const body = form({ cutId: fx.project.cutId, name });
      body.append('file', new Blob([new Uint8Array(sampleBytes('mp3', 64))]), 'take.mp3');
      return body;
    };
    return [
      { label: 'register name', send: (name: string) => fx.api.request('POST', '/api/auth/register', { json: { email: `n-${Math.random()}@example.com`, password: 'password-1', name } }), read: (body: any) => body.user.name },
      { label: 'project name (JSON)', send: (name: string) => fx.api.request('POST', '/api/projects', { token: admin, json: { name } }), read: (body: any) => body.name },
      { label: 'project name (multipart)', send: (name: string) => fx.api.request('POST', '/api/projects', { token: admin, body: form({ name }) }), read: (body: any) => body.name },
      { label: 'project rename', send: (name: string) => fx.api.request('PUT', `/api/projects/${fx.project.id}`, { token: admin, json: { name } }), read: (body: any) => body.name },
      // Vibe and cut names are unique in their parent: the new ones go where the renamed ones are not.
      { label: 'vibe name', send: async (name: string) => fx.api.request('POST', `/api/projects/${(await fx.newProject()).id}/vibes`, { token: admin, json: { name } }), read: (body: any) => body.name },
      { label: 'vibe rename (multipart)', send: (name: string) => fx.api.request('PUT', `/api/vibes/${fx.project.vibeId}`, { token: admin, body: form({ name }) }), read: (body: any) => body.name },
      { label: 'cut name', send: async (name: string) => fx.api.request('POST', `/api/vibes/${(await fx.newVibe()).vibeId}/cuts`, { token: admin, json: { name } }), read: (body: any) => body.name },
      { label: 'cut rename', send: (name: string) => fx.api.request('PUT', `/api/cuts/${fx.project.cutId}`, { token: admin, json: { name } }), read: (body: any) => body.name },
      { label: 'file display name', send: (name: string) => fx.api.request('POST', '/api/files/upload', { token: admin, body: upload(name) }), read: (body: any) => body.name },
    ];
  };

  it('trims names and takes 1–200 characters without control characters, on every name field', async () => {
    for (const field of nameFields()) {
      for (const bad of ['', '   ', 'x'.repeat(201), 'tab\there', 'nul\u0000', 'del\u007f']) {
        const response = await field.send(bad);
        expect(response.status, `${field.label} ${JSON.stringify(bad)}`).toBe(400);
        expectProblem(response, 400, 'VALIDATION_FAILED');
        expect(response.body.errors.map((error: { field: string }) => error.field)).toContain('name');
      }
      const longest = await field.send(` ${'é'.repeat(200)} `);
      expect(longest.status, `${field.label}: ${longest.text}`).toBeLessThan(300);
      expect(field.read(longest.body)).toBe('é'.repeat(200));
    }
  });

  it('takes descriptions of at most 2000 characters, on create and update, JSON and multipart', async () => {
    const admin = fx.actors.projectAdmin.token!;
    const sends = [
      (description: string) => fx.api.request('POST', '/api/projects', { token: admin, json: { name: 'P', description } }),
      (description: string) => fx.api.request('PUT', `/api/projects/${fx.project.id}`, { token: admin, json: { description } }),
      (description: string) => {
        const body = new FormData();
        body.append('name', 'P');
        body.append('description', description);
        return fx.api.request('POST', '/api/projects', { token: admin, body });
      },
    ];
    for (const send of sends) {
      for (const bad of ['x'.repeat(2001), 'nul\u0000inside']) {
        const response = await send(bad);
        expectProblem(response, 400, 'VALIDATION_FAILED');
        expect(response.body.errors[0].field).toBe('description');
      }
      // CRLF, since a form sends every line break as CRLF: counted and stored as LF.
      const longest = await send('line one\r\nline two\t'.padEnd(2001, 'x'));
      expect(longest.status, longest.text).toBeLessThan(300);
      expect(longest.body.description).toBe('line one\nline two\t'.padEnd(2000, 'x'));
    }
  });
});

describe('HEAD', () => {
  it('answers as GET does, without a body, on every GET route; both carry X-Request-Id', async () => {
    const token = fx.actors.projectAdmin.token;
    for (const { path } of routes().filter(({ method, path }) => method === 'GET' && !path.includes('/idp'))) {
      const concrete = fill(path, realId);
      const [get, head] = [await fx.api.request('GET', concrete, { token }), await fx.api.request('HEAD', concrete, { token })];
      expect(head.status, `HEAD ${concrete}`).toBe(get.status);
      expect(get.headers.get('x-request-id'), concrete).toMatch(/^[0-9a-f-]{36}$/);
      expect(head.headers.get('x-request-id'), concrete).toMatch(/^[0-9a-f-]{36}$/);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(head.text).toBe('');
    }
  });

  it('is 404 on a path without a GET route, and runs no other method (a HEAD never logs out)', async () => {
    const user = await fx.api.register();
    // A resumable upload has a HEAD route of its own (uploads.test.ts).
    const headRoutes = server.routes.filter((route) => route.startsWith('HEAD ')).map((route) => route.slice('HEAD '.length));
    const getPaths = new Set([...routes().filter(({ method }) => method === 'GET').map(({ path }) => path), ...headRoutes]);
    const others = routes().filter(({ path }) => !getPaths.has(path));
    expect(others.map(({ path }) => path)).toContain('/api/auth/logout');
    for (const { path } of others) {
      const response = await fx.api.request('HEAD', fill(path, realId), { token: user.accessToken });
      expect(response.status, `HEAD ${path}`).toBe(404);
    }
    expect((await fx.api.request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(200);
  });

  it('runs no other handler whatever the spelling: HEAD //…/vibes creates no vibe, HEAD //api/auth/logout ends no session', async () => {
    const user = await fx.api.register();
    const project = await expectStatus(fx.api.request('POST', '/api/projects', { token: user.accessToken, json: { name: 'Heads' } }), 201);
    const asUser = (json: unknown) => {
      const body = JSON.stringify(json);
      return { headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body };
    };
    for (const path of [`//api/projects/${project.id}/vibes`, `/api//projects/${project.id}/vibes`, `/api/projects/${project.id}/./vibes`]) {
      const answer = await rawRequest(server.url, 'HEAD', path, asUser({ name: `Made by HEAD ${path}` }));
      expect(answer.status, `HEAD ${path}`).toBe(404);
      expect(answer.headers['x-request-id'], path).toBeTruthy();
    }
    const [vibes] = await server.sql`select count(*)::int as count from vibes where project_id = ${project.id}`;
    expect(vibes?.count).toBe(0);
    for (const path of ['//api/auth/logout', '/api/auth//logout', '//api//auth/logout']) {
      expect((await rawRequest(server.url, 'HEAD', path, asUser({ refreshToken: user.refreshToken }))).status, `HEAD ${path}`).toBe(404);
    }
    expect((await fx.api.request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(200);
    expect((await fx.api.request('POST', '/api/auth/refresh', { json: { refreshToken: user.refreshToken } })).status).toBe(200);
  });
});

describe('every method on every spelling of every path', () => {
  const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
  const percentEncoded = (character: string) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;

  /** Spellings of a concrete path other than itself: letter case, `//`, `%2F`, dot segments, a trailing slash, `;`. */
  const misspelt = (path: string): Array<[string, string]> => {
    if (path === '/') return [['double slash', '//'], ['dot segment', '/.'], ['matrix parameter', '/;x'], ['encoded slash', '/%2F']];
    const [first, ...others] = path.split('/').slice(1) as [string, ...string[]];
    const tail = others.map((segment) => `/${segment}`).join('');
    const spellings: Array<[string, string]> = [
      ['upper case', path.toUpperCase()],
      ['leading //', `/${path}`],
      ['inner //', `/${first}/${tail}`],
      ['trailing slash', `${path}/`],
      ['dot segment', `/${first}/.${tail}`],
      ['dot-dot segment', `/${first}/x/..${tail}`],
      ['leading dot-dot', `/..${path}`],
      ['encoded dot segment', `/${first}/%2e${tail}`],
      ['encoded dot-dot segment', `/${first}/x/%2E%2E${tail}`],
      ['matrix parameter', `/${first};x${tail}`],
      ['trailing ;', `${path};`],
      ['percent-encoded letter', `/${percentEncoded(first[0]!)}${first.slice(1)}${tail}`],
    ];
    if (others.length > 0) spellings.push(['encoded slash', `/${first}%2F${others.join('/')}`]);
    return spellings.filter(([, spelled]) => spelled !== path);
  };

  const problemCode = (body: string): string | undefined => {
    try {
      return (JSON.parse(body) as { code?: string }).code;
    } catch {
      return undefined;
    }
  };

  /** Real ids and tokens for every parameter, invitation tokens included, so a route reached would act (and log its token). */
  const liveId = (owner: string, param: string) => (param === 'token' && owner !== 'share' ? invitationToken : realId(owner, param));

  /** What the database holds, table by table: equal before and after means nothing was changed. */
  const snapshot = async (): Promise<Record<string, string>> => {
    const tables = await server.sql<{ name: string }[]>`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
    const digests: Record<string, string> = {};
    for (const { name } of tables) {
      // The recurring jobs (purges, the storage report) run on their clock whatever the requests: their runs
      // and their jobs are not what a request changed. So do the attempts of the webhook delivery made above, to
      // an address that never answers: each retry comes due on its schedule, whatever the requests.
      if (name === 'job_schedules' || name === 'webhook_deliveries' || name === 'webhook_attempts') continue;
      const recurring = name === 'jobs' ? `where t.kind not in (select kind from job_schedules) and t.kind <> 'webhook_delivery'` : '';
      const [row] = await server.sql.unsafe(`select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from "${name}" t ${recurring}`);
      digests[name] = row!.digest as string;
    }
    return digests;
  };

  /**
   * The snapshot once background work (the analysis and previews of the files uploaded above) has settled: no
   * job due or running (an encode can run for seconds without a row changing), then two alike in a row.
   */
  const settled = async (): Promise<Record<string, string>> => {
    const busy = async () => (await server.sql`select 1 from jobs where state = 'running' or (state = 'queued' and run_at <= now())`).length > 0;
    for (let last = await snapshot(); ; ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const next = await snapshot();
      if (JSON.stringify(next) === JSON.stringify(last) && !(await busy())) return next;
      last = next;
    }
  };

  it('is 404 NOT_FOUND for every method on a spelling other than the declared path, changes nothing, and is logged with its request id and no token', async () => {
    // A session of its own: should a misspelt logout get through, the rest of the file keeps its ADMIN.
    const me = await expectStatus(fx.api.request('GET', '/api/auth/me', { token: fx.actors.projectAdmin.token }), 200);
    const session = await expectStatus(fx.api.request('POST', '/api/auth/login', { json: { email: me.email, password: 'correct horse battery' } }), 200);
    const body = JSON.stringify({ name: 'Spelled', email: 'spelled@example.com', role: 'MEMBER', refreshToken: session.refreshToken, token: invitationToken, body: 'Spelled', atMs: 0 });
    const headers = { authorization: `Bearer ${session.accessToken}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const before = await settled();
    const wrong: string[] = [];
    const sent: string[] = [];
    const paths = [...new Set(server.routes.map((route) => fill(route.split(' ')[1]!, liveId)))];
    for (const path of paths) {
      // Each path's spellings go at once (a few connections), the paths one after another.
      await Promise.all(
        misspelt(path).flatMap(([spelling, spelled]) =>
          METHODS.map(async (method) => {
            const requestId = `spelling-${sent.push(spelled)}`;
            const answer = await rawRequest(server.url, method, spelled, { agent, headers: { ...headers, 'x-request-id': requestId }, body });
            const code = method === 'HEAD' ? 'NOT_FOUND' : problemCode(answer.body);
            if (answer.status !== 404 || code !== 'NOT_FOUND' || !/^application\/problem\+json/.test(answer.headers['content-type'] ?? '')) {
              wrong.push(`${spelling}: ${method} ${spelled} → ${answer.status} ${answer.body.slice(0, 120)}`);
            }
            if (answer.headers['x-request-id'] !== requestId) wrong.push(`${spelling}: ${method} ${spelled} → X-Request-Id ${answer.headers['x-request-id']}`);
          }),
        ),
      );
    }
    agent.destroy();
    expect(wrong).toEqual([]);
    expect(sent.length).toBeGreaterThan(5000);
    expect(await snapshot()).toEqual(before);

    const requestLines = new Map(
      logged
        .map((line) => JSON.parse(line) as { msg: string; reqId?: string; path?: string })
        .filter((line) => line.msg === 'request')
        .map((line) => [line.reqId, line]),
    );
    const unlogged = sent.flatMap((spelled, index) => (requestLines.has(`spelling-${index + 1}`) ? [] : [spelled]));
    expect(unlogged).toEqual([]);
    const log = logged.join('');
    expect(log).not.toContain(feedbackToken);
    expect(log).not.toContain(invitationToken);
  });

  it('changes nothing with HEAD or OPTIONS on any declared path', async () => {
    const token = fx.actors.projectAdmin.token;
    const before = await settled();
    for (const route of server.routes) {
      const path = fill(route.split(' ')[1]!, liveId);
      for (const method of ['HEAD', 'OPTIONS']) {
        const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': '16' };
        const answer = await rawRequest(server.url, method, path, { headers, body: '{"name":"Probe"}' });
        expect(answer.status, `${method} ${path}`).toBeLessThan(500);
        expect(answer.headers['x-request-id'], `${method} ${path}`).toBeTruthy();
      }
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe('settings', () => {
  it('reads the default PUBLIC_URL, http://localhost:<PORT>, with the port PORT=0 bound', async () => {
    const port = new URL(server.url).port;
    expect(server.config.publicUrl).toBe(`http://localhost:${port}`);
    const link = await expectStatus(fx.api.request('POST', `/api/files/${fileId}/share`, { token: fx.actors.projectAdmin.token }), 201);
    expect(link.shareUrl).toBe(`http://localhost:${port}/share/${link.token}`);
    const events = await openEventSocket(server.url, { token: fx.actors.projectAdmin.token, origin: `http://localhost:${port}` });
    events.close();
  });
});

describe('creates and deletes', () => {
  it('answer every create with 201, the record and a Location; every delete with {id, deleted: true}', async () => {
    const admin = fx.actors.projectAdmin.token!;
    const project = await fx.api.request('POST', '/api/projects', { token: admin, json: { name: 'Created' } });
    const vibe = await fx.api.request('POST', `/api/projects/${project.body.id}/vibes`, { token: admin, json: { name: 'V' } });
    const cut = await fx.api.request('POST', `/api/vibes/${vibe.body.id}/cuts`, { token: admin, json: { name: 'C' } });
    const file = await upload(fx.api, admin, cut.body.id, 'take.mp3', sampleBytes('mp3', 64));
    const invitee = await fx.api.register();
    await addMember(fx.api, admin, project.body.id, invitee);
    const invited = await fx.api.request('POST', `/api/projects/${project.body.id}/invite`, { token: admin, json: { email: 'later@example.com', role: 'MEMBER' } });
    const share = await fx.api.request('POST', `/api/files/${file.body.id}/share`, { token: admin });
    const created = { project, vibe, cut, file, invited, share };
    for (const [label, response] of Object.entries(created)) {
      expect(response.status, `${label}: ${response.text}`).toBe(201);
      expect(response.headers.get('location'), label).toMatch(/^\/api\//);
    }
    for (const record of [project, vibe, cut, file]) {
      const located = await fx.api.request('GET', record.headers.get('location')!, { token: admin });
      expect(located.status).toBe(200);
      expect(located.body.id).toBe(record.body.id);
    }

    // What goes to the trash (§21) also says until when.
    const trashedUntil = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/);
    const deletes: [string, string, boolean][] = [
      [`/api/projects/${project.body.id}/invitations/${invited.body.invitation.id}`, invited.body.invitation.id, false],
      [`/api/projects/${project.body.id}/members/${invitee.user.id}`, invitee.user.id, false],
      [`/api/files/${file.body.id}`, file.body.id, true],
      [`/api/cuts/${cut.body.id}`, cut.body.id, true],
      [`/api/vibes/${vibe.body.id}`, vibe.body.id, true],
      [`/api/projects/${project.body.id}`, project.body.id, true],
    ];
    for (const [path, id, trashed] of deletes) {
      const response = await fx.api.request('DELETE', path, { token: admin });
      expect(response.status, path).toBe(200);
      expect(response.body).toEqual(trashed ? { id, deleted: true, trashedUntil } : { id, deleted: true });
    }
  });
});

describe('records', () => {
  /** Every `…At` field anywhere in a body, with its path. */
  const timestamps = (value: unknown, path = ''): [string, unknown][] => {
    if (Array.isArray(value)) return value.flatMap((item, index) => timestamps(item, `${path}[${index}]`));
    if (value === null || typeof value !== 'object') return [];
    return Object.entries(value).flatMap(([key, inner]) =>
      key.endsWith('At') ? [[`${path}.${key}`, inner] as [string, unknown]] : timestamps(inner, `${path}.${key}`),
    );
  };

  it('write every timestamp as ISO 8601 UTC with milliseconds, and absent optional values as null', async () => {
    const admin = fx.actors.projectAdmin.token!;
    await expectStatus(fx.api.request('POST', `/api/projects/${fx.project.id}/invite`, { token: admin, json: { email: 'pending@example.com', role: 'MEMBER' } }), 201);
    const link = await expectStatus(fx.api.request('POST', `/api/files/${fileId}/share`, { token: admin, json: { expiresIn: 3600 } }), 201);
    const bodies = await Promise.all(
      [`/api/projects/${fx.project.id}`, '/api/projects', '/api/auth/me', `/api/files/${fileId}`, `/api/cuts/${fx.project.cutId}`, `/api/vibes/${fx.project.vibeId}`].map(
        async (path) => (await expectStatus(fx.api.request('GET', path, { token: admin }), 200)) as unknown,
      ),
    );
    const shared = await fx.api.request('GET', `/api/share/${link.token}`, { headers: { accept: 'application/json' } });
    const found = timestamps([...bodies, link, shared.body]);
    expect(found.map(([path]) => path)).toEqual(expect.arrayContaining(['[0].createdAt', '[0].updatedAt', '[0].members[0].joinedAt', '[0].invitations[0].expiresAt']));
    for (const [path, value] of found) expect(value, path).toMatch(ISO_TIMESTAMP);

    const bare = await expectStatus(fx.api.request('POST', '/api/projects', { token: admin, json: { name: 'Bare' } }), 201);
    expect(bare).toMatchObject({ description: null, imageUrl: null });
    const me = await expectStatus(fx.api.request('GET', '/api/auth/me', { token: admin }), 200);
    expect(me.avatarUrl).toBeNull();
    const forever = await expectStatus(fx.api.request('POST', `/api/files/${fileId}/share`, { token: admin }), 201);
    expect(forever.expiresAt).toBeNull();
  });
});

describe('the OpenAPI document', () => {
  /** The schema /api/openapi.json gives an operation's answer, compiled; fails when the document has none. */
  const schemaOf = (ajv: Ajv2020, method: string, route: string, status: number, contentType: string) => {
    const template = route.replace(/:(\w+)/g, '{$1}');
    const pointer = ['paths', template, method.toLowerCase(), 'responses', String(status), 'content', contentType, 'schema']
      .map((segment) => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1')))
      .join('/');
    const validate = ajv.getSchema(`openapi#/${pointer}`);
    if (!validate) throw new Error(`no documented schema for ${method} ${template} ${status} ${contentType}`);
    return validate;
  };

  it('describes every record the server answers, field for field', async () => {
    const document = (await fx.api.request('GET', '/api/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema({ ...document, $id: 'openapi' });
    const admin = fx.actors.projectAdmin.token!;
    const member = fx.actors.member.token!;
    const user = await fx.api.register();
    const project = await expectStatus(fx.api.request('POST', '/api/projects', { token: admin, json: { name: 'Documented' } }), 201);
    const vibe = await expectStatus(fx.api.request('POST', `/api/projects/${project.id}/vibes`, { token: admin, json: { name: 'V' } }), 201);
    const otherVibe = await expectStatus(fx.api.request('POST', `/api/projects/${project.id}/vibes`, { token: admin, json: { name: 'W' } }), 201);
    const cut = await expectStatus(fx.api.request('POST', `/api/vibes/${vibe.id}/cuts`, { token: admin, json: { name: 'C' } }), 201);
    const file = await expectStatus(upload(fx.api, admin, cut.id, 'take.mp3', sampleBytes('mp3', 64)), 201);
    const share = await expectStatus(fx.api.request('POST', `/api/files/${file.id}/share`, { token: admin, json: { expiresIn: 600 } }), 201);
    const added = await fx.api.register();
    const addedInvitation = await expectStatus(
      fx.api.request('POST', `/api/projects/${project.id}/invite`, { token: admin, json: { email: added.user.email, role: 'MEMBER' } }),
      201,
    );
    const joinerEmail = `doc-joiner-${Date.now()}@example.com`;
    const joinerInvitation = await expectStatus(
      fx.api.request('POST', `/api/projects/${project.id}/invite`, { token: admin, json: { email: joinerEmail, role: 'MEMBER' } }),
      201,
    );
    const revoked = await expectStatus(
      fx.api.request('POST', `/api/projects/${project.id}/invite`, { token: admin, json: { email: 'doc-revoked@example.com', role: 'MEMBER' } }),
      201,
    );

    type Call = [method: string, route: string, path: string, options?: Parameters<typeof fx.api.request>[2]];
    const calls: Call[] = [
      ['GET', '/api/health', '/api/health'],
      ['POST', '/api/auth/register', '/api/auth/register', { json: { email: `doc-${Date.now()}@example.com`, password: 'password-1', name: 'Doc' } }],
      ['POST', '/api/auth/login', '/api/auth/login', { json: { email: user.user.email, password: user.password } }],
      ['POST', '/api/auth/login', '/api/auth/login', { json: { email: user.user.email, password: 'wrong-password' } }],
      ['POST', '/api/auth/refresh', '/api/auth/refresh', { json: { refreshToken: user.refreshToken } }],
      ['GET', '/api/auth/me', '/api/auth/me', { token: admin }],
      ['GET', '/api/auth/me', '/api/auth/me'],
      ['GET', '/api/projects', '/api/projects', { token: admin }],
      ['GET', '/api/projects/:id', `/api/projects/${project.id}`, { token: admin }],
      ['GET', '/api/projects/:id', `/api/projects/${fx.project.id}`, { token: member }],
      ['PUT', '/api/projects/:id', `/api/projects/${project.id}`, { token: admin, json: { description: 'Now described' } }],
      ['POST', '/api/projects/:id/invite', `/api/projects/${project.id}/invite`, { token: admin, json: { email: 'doc-later@example.com', role: 'ADMIN' } }],
      ['POST', '/api/projects/:id/invite', `/api/projects/${project.id}/invite`, { token: admin, json: { email: user.user.email, role: 'ADMIN' } }],
      ['GET', '/api/invitations/:token', `/api/invitations/${inviteToken(addedInvitation.inviteUrl)}`],
      ['GET', '/api/invitations/:token', '/api/invitations/unknown'],
      ['POST', '/api/invitations/accept', '/api/invitations/accept', { token: member, json: { token: inviteToken(addedInvitation.inviteUrl) } }],
      ['POST', '/api/invitations/accept', '/api/invitations/accept', { token: added.accessToken, json: { token: inviteToken(addedInvitation.inviteUrl) } }],
      ['POST', '/api/invitations/accept', '/api/invitations/accept', { token: added.accessToken, json: { token: inviteToken(addedInvitation.inviteUrl) } }],
      ['POST', '/api/auth/register', '/api/auth/register', { json: { email: joinerEmail, password: 'password-1', name: 'Joiner', inviteToken: inviteToken(joinerInvitation.inviteUrl) } }],
      ['DELETE', '/api/projects/:id/invitations/:invitationId', `/api/projects/${project.id}/invitations/${revoked.invitation.id}`, { token: admin }],
      ['PUT', '/api/projects/:id/members/:userId', `/api/projects/${project.id}/members/${added.user.id}`, { token: admin, json: { role: 'ADMIN' } }],
      ['GET', '/api/vibes/:id', `/api/vibes/${vibe.id}`, { token: admin }],
      ['PUT', '/api/vibes/:id', `/api/vibes/${vibe.id}`, { token: admin, json: { name: 'Renamed' } }],
      ['PUT', '/api/vibes/reorder', '/api/vibes/reorder', { token: admin, json: { vibeIds: [otherVibe.id, vibe.id] } }],
      ['GET', '/api/cuts/:id', `/api/cuts/${cut.id}`, { token: admin }],
      ['PUT', '/api/cuts/:id', `/api/cuts/${cut.id}`, { token: admin, json: { name: 'Renamed' } }],
      ['PUT', '/api/cuts/:id/move', `/api/cuts/${cut.id}/move`, { token: admin, json: { targetVibeId: otherVibe.id } }],
      ['PUT', '/api/cuts/:id/move', `/api/cuts/${cut.id}/move`, { token: admin, json: { targetVibeId: 'nope' } }],
      ['GET', '/api/files/:id', `/api/files/${file.id}`, { token: admin }],
      ['GET', '/api/files/storage', '/api/files/storage', { token: member }],
      ['GET', '/api/files/storage', '/api/files/storage', { token: fx.actors.siteAdminNonMember.token }],
      ['GET', '/api/share/:token', `/api/share/${share.token}`, { headers: { accept: 'application/json' } }],
      ['GET', '/api/share/:token', '/api/share/unknown', { headers: { accept: 'application/json' } }],
      ['DELETE', '/api/files/:id/share', `/api/files/${file.id}/share`, { token: admin }],
      ['DELETE', '/api/files/:id', `/api/files/${file.id}`, { token: admin }],
      ['DELETE', '/api/cuts/:id', `/api/cuts/${cut.id}`, { token: admin }],
      ['DELETE', '/api/vibes/:id', `/api/vibes/${vibe.id}`, { token: admin }],
      ['DELETE', '/api/projects/:id/members/:userId', `/api/projects/${project.id}/members/${added.user.id}`, { token: admin }],
      ['DELETE', '/api/projects/:id', `/api/projects/${project.id}`, { token: admin }],
      ['POST', '/api/auth/logout', '/api/auth/logout', { json: { refreshToken: user.refreshToken } }],
    ];
    const answered = [
      ['POST', '/api/projects', project, 201],
      ['POST', '/api/projects/:projectId/vibes', vibe, 201],
      ['POST', '/api/vibes/:vibeId/cuts', cut, 201],
      ['POST', '/api/files/upload', file, 201],
      ['POST', '/api/files/:id/share', share, 201],
    ] as const;
    for (const [method, route, body, status] of answered) {
      const validate = schemaOf(ajv, method, route, status, 'application/json');
      expect(validate(body), `${method} ${route}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    for (const [method, route, path, options] of calls) {
      const response = await fx.api.request(method, path, options);
      const contentType = response.headers.get('content-type')!.split(';')[0]!;
      const validate = schemaOf(ajv, method, route, response.status, contentType);
      expect(validate(response.body), `${method} ${path} ${response.status}: ${JSON.stringify(validate.errors)} ${response.text.slice(0, 300)}`).toBe(true);
    }
  });
});
