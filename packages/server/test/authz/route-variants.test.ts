/**
 * No other spelling of a path gets past a decision taken for its route. Every route the server registers is
 * called, as every actor of the authorization matrix, through the paths of its matrix rows spelled otherwise:
 * in upper case, with one segment capitalized, with a trailing slash, with a letter percent-encoded, with
 * a character of a parameter percent-encoded, with a leading or an inner `//`, with a `;` parameter and with
 * its last `/` percent-encoded. Each answer must be the status the row gives that actor on the
 * path as declared, or 404 NOT_FOUND. A route without a row (see NOT_IN_MATRIX in matrix.test.ts) is called
 * with a made-up id for each parameter and no body, and compared with the same call on its declared path.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../support/server.js';
import { type Actor, ACTOR_NAMES, buildFixture, callRow, type Fixture, loadRowSets, type MatrixRow, shape, tokenExpectations } from './fixture.js';

const server = await startTestServer();
const rows = (await loadRowSets()).flatMap((set) => set.rows);
let fx: Fixture;

beforeAll(async () => {
  fx = await buildFixture(server);
});
afterAll(() => server.close());

const percentEncoded = (character: string) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;

/** The other spellings of `path` (a concrete path of `route`, maybe with a query, which they keep as it is). */
function spellingsOf(route: string, path: string): Array<[string, string]> {
  const queryStart = path.indexOf('?');
  const pathname = queryStart === -1 ? path : path.slice(0, queryStart);
  const query = queryStart === -1 ? '' : path.slice(queryStart);
  const segments = pathname.split('/');
  const declared = route.split('/');
  expect(segments.length, `${path} is a path of ${route}`).toBe(declared.length);
  const respelled = (index: number, spell: (segment: string) => string) =>
    segments.map((segment, i) => (i === index ? spell(segment) : segment)).join('/') + query;
  // The last segment the route spells out itself, not a parameter: `tokens` in /api/tokens/:id.
  const literal = declared.findLastIndex((segment) => segment !== '' && !segment.startsWith(':'));
  const spellings: Array<[string, string]> = [
    ['upper case', pathname.toUpperCase() + query],
    ['capitalized', respelled(literal, (segment) => segment[0]!.toUpperCase() + segment.slice(1))],
    ['trailing slash', `${pathname}/${query}`],
    ['percent-encoded letter', respelled(literal, (segment) => percentEncoded(segment[0]!) + segment.slice(1))],
    ['leading //', `/${pathname}${query}`],
    ['inner //', respelled(literal, (segment) => `/${segment}`)],
    ['matrix parameter', respelled(literal, (segment) => `${segment};x`)],
  ];
  // The last separator percent-encoded (fetch keeps %2F as sent; it resolves dot segments, which conventions.test.ts sends raw).
  const lastSlash = pathname.lastIndexOf('/');
  if (lastSlash > 0) spellings.push(['encoded slash', `${pathname.slice(0, lastSlash)}%2F${pathname.slice(lastSlash + 1)}${query}`]);
  const parameter = declared.findIndex((segment) => segment.startsWith(':'));
  if (parameter !== -1) spellings.push(['percent-encoded parameter', respelled(parameter, (segment) => percentEncoded(segment[0]!) + segment.slice(1))]);
  return spellings;
}

/** A stand-in row for a route the matrix has none for: every parameter a fresh id, no body, the status measured. */
function standInRow(route: string): MatrixRow & { measured: true } {
  return {
    endpoint: route,
    path: () => route.split(' ')[1]!.replace(/:[^/]+/g, () => randomUUID()),
    expect: { anonymous: 0, nonMember: 0, member: 0, projectAdmin: 0, siteAdminNonMember: 0 },
    measured: true,
  };
}

for (const route of server.routes) {
  const method = route.split(' ')[0]!;
  const ofRoute = rows.filter((row) => shape(row.endpoint) === shape(route));
  describe(route, () => {
    it.each(ACTOR_NAMES)('as %s: every other spelling answers as the declared path does, or 404', async (actorName) => {
      const actor: Actor = fx.actors[actorName];
      const wrong: string[] = [];
      for (const row of ofRoute.length > 0 ? ofRoute : [standInRow(route)]) {
        const path = await row.path(fx, actor);
        const declaredStatus =
          'measured' in row ? (await callRow(fx, row, path, actor)).status : { ...row.expect, ...tokenExpectations(row, method) }[actorName];
        for (const [spelling, respelled] of spellingsOf(route.split(' ')[1]!, path)) {
          const response = await callRow(fx, row, respelled, actor);
          const notFound = response.status === 404 && (method === 'HEAD' || response.body?.code === 'NOT_FOUND');
          if (response.status !== declaredStatus && !notFound) {
            wrong.push(`${spelling}: ${method} ${respelled} → ${response.status} (declared path: ${declaredStatus}) ${response.text.slice(0, 200)}`);
          }
        }
      }
      expect(wrong).toEqual([]);
    });
  });
}
