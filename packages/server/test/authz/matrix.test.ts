/**
 * The authorization matrix: every endpoint, called as each actor, answers the status the contract gives
 * that actor (non-members get 404 for everything inside a project, a site ADMIN included;
 * a MEMBER gets 403 for ADMIN actions; nobody gets in without credentials).
 *
 * Rows live in `rows/*.ts`, one file per feature; every file there is loaded, so adding an endpoint is
 * adding a row (or a file exporting `rows`). A row:
 *
 *   {
 *     endpoint: 'PUT /api/vibes/:id',                          // method and documented path: the test name
 *     path: (fx, actor) => `/api/vibes/${fx.project.vibeId}`,  // the concrete path for one actor's call
 *     body: (fx, actor) => ({ name: 'New name' }),             // optional: JSON, a FormData (multipart), or bytes
 *     headers: (fx) => ({ 'tus-resumable': '1.0.0' }),          // optional: request headers beyond the token
 *     expect: { anonymous: 401, nonMember: 404, member: 200, projectAdmin: 200, siteAdminNonMember: 404 },
 *   }
 *
 * The ADMIN's personal access tokens (`read`, `write`, `write` limited to another project) are actors
 * too; their statuses follow from the ADMIN's by the rules of `tokenExpectations`, and a row sets
 * `tokens: { … }` where they do not.
 *
 * `path` and `body` run once per actor, in the order of ACTOR_NAMES, and may be async: a row that
 * deletes or changes membership creates its own target each time (fx.newProject(), fx.newVibe(),
 * fx.newCut(), fx.newMember()), so no actor's call depends on another's. Bodies must be valid, so the
 * status shows the access decision alone. See fixture.ts for what the fixture holds.
 *
 * The last test checks that every declared route (contract/routes.ts, which the server registers) has a row (a suffix in parentheses, as in
 * 'DELETE /api/projects/:id/members/:userId (self)', tells rows of one route apart); the few routes
 * that cannot be one HTTP call per actor are listed in NOT_IN_MATRIX with the test that covers them.
 */
import { ROUTES } from '@bandcollab/sdk/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { ACTOR_NAMES, buildFixture, callRow, expectStatus, type Fixture, loadRowSets, shape, storeFileDirectly, tokenExpectations } from './fixture.js';

/** Routes without a row, and why. */
const NOT_IN_MATRIX: Record<string, string> = {
  'GET /api/events': 'a WebSocket upgrade: events.test.ts checks who may connect',
  'DELETE /api/auth/me': "deletes the caller's own account, so it would delete the actors: accounts.test.ts checks who may",
  // Anonymous by design, and reached with a token only a mail carries (email is off on this server).
  'POST /api/auth/password/forgot': 'anonymous, alike for every caller and email: email.test.ts checks its answers, limits and timing',
  'POST /api/auth/password/reset': 'takes the one-time token a reset mail carries: email.test.ts follows it',
  'GET /reset/:token': "the reset mail's page, for people: reset-page-browser.test.ts opens it in Chromium",
  'POST /reset/:token': "the reset page's form: reset-page-browser.test.ts submits it",
  'GET /unsubscribe/:token': "a notification mail's signed link, for people, no sign-in: notifications.test.ts opens it",
  'POST /unsubscribe/:token': "RFC 8058 one-click, the signed link alone decides: notifications.test.ts posts it (and a forged one)",
  // The matrix server runs without PREVIEW_STEMS, so no entry has a preview to serve.
  'GET /api/files/:id/entries/:index/preview': 'needs PREVIEW_STEMS and a made entry preview: previews/stem-previews.test.ts serves it to a member and answers 404 to a stranger',
};

const CODE_OF_STATUS: Record<number, string[]> = {
  401: ['UNAUTHENTICATED'],
  403: ['FORBIDDEN', 'INSUFFICIENT_SCOPE'],
  404: ['NOT_FOUND', 'IDP_DISABLED'],
};

const rowSets = await loadRowSets();

let server: TestServer;
let fx: Fixture;

beforeAll(async () => {
  server = await startTestServer();
  fx = await buildFixture(server);
});
afterAll(() => server?.close());

for (const { name, rows } of rowSets) {
  describe(`authorization matrix: ${name}`, () => {
    for (const row of rows) {
      const method = row.endpoint.split(' ')[0]!;
      const expected = { ...row.expect, ...tokenExpectations(row, method) };
      it.each(ACTOR_NAMES.map((actor) => [actor, expected[actor]] as const))(`${row.endpoint} as %s → %i`, async (actorName, status) => {
        const actor = fx.actors[actorName];
        const path = await row.path(fx, actor);
        const response = await callRow(fx, row, path, actor);
        expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
        if (CODE_OF_STATUS[status] !== undefined && method !== 'HEAD') {
          expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          expect(CODE_OF_STATUS[status]).toContain(response.body.code);
        }
      });
    }
  });
}

/** The routes that list the trash itself: they name what is in it. */
const LISTS_THE_TRASH = new Set(['GET /api/projects/:id/trash', 'GET /api/trash']);

describe('nothing in the trash leaks (§21)', () => {
  const trashed: string[] = [];
  beforeAll(async () => {
    const admin = fx.actors.projectAdmin;
    const as = (method: string, path: string, json?: unknown) => fx.api.request(method, path, { token: admin.token, json });
    const comment = async (fileId: string) => (await expectStatus(as('POST', `/api/files/${fileId}/comments`, { body: 'Trashed words' }), 201)).id as string;
    // A vibe with a cut, a file and a comment, trashed whole.
    const vibe = await fx.newVibe();
    const inVibe = await storeFileDirectly(fx.server, vibe.cutId, admin.userId!);
    trashed.push(vibe.vibeId, vibe.cutId, inVibe.id, await comment(inVibe.id));
    await expectStatus(as('DELETE', `/api/vibes/${vibe.vibeId}`), 200);
    // A file and a comment of the shared cut, trashed one by one.
    const file = await storeFileDirectly(fx.server, fx.project.cutId, admin.userId!);
    trashed.push(file.id);
    await expectStatus(as('DELETE', `/api/files/${file.id}`), 200);
    const kept = await storeFileDirectly(fx.server, fx.project.cutId, admin.userId!);
    const words = await comment(kept.id);
    trashed.push(words);
    await expectStatus(as('DELETE', `/api/comments/${words}`), 200);
    // A whole project.
    const project = await fx.newProject();
    trashed.push(project.id, project.vibeId, project.cutId);
    await expectStatus(as('DELETE', `/api/projects/${project.id}`), 200);
  });

  const reads = rowSets.flatMap(({ rows }) => rows).filter((row) => row.endpoint.startsWith('GET ') && row.expect.projectAdmin === 200 && !LISTS_THE_TRASH.has(row.endpoint));
  it.each(reads.map((row) => [row.endpoint, row] as const))('%s names nothing trashed', async (_endpoint, row) => {
    const actor = fx.actors.projectAdmin;
    const path = await row.path(fx, actor);
    const response = await callRow(fx, row, path, actor);
    expect(response.status, `${path}: ${response.text}`).toBe(200);
    for (const id of trashed) expect(response.text, `${path} names ${id}`).not.toContain(id);
  });
});

it('has a row for every declared route, and no route both in a row and in NOT_IN_MATRIX', () => {
  const inRows = new Set(rowSets.flatMap(({ rows }) => rows.map((row) => shape(row.endpoint))));
  const exempt = new Set(Object.keys(NOT_IN_MATRIX).map(shape));
  const declared = Object.values(ROUTES).map((route) => shape(`${route.method} ${route.path}`));
  expect(declared.filter((route) => !inRows.has(route) && !exempt.has(route))).toEqual([]);
  expect([...exempt].filter((route) => inRows.has(route))).toEqual([]);
});
