import { everyone, expectStatus, type Fixture, type MatrixRow } from '../fixture.js';

const newTokenBody = { name: 'CI', scope: 'write', expiresIn: 3600 };

/** A new token of the project's ADMIN, for each actor's call. */
async function newTokenPath(fx: Fixture): Promise<string> {
  const created = await expectStatus(fx.api.request('POST', '/api/tokens', { token: fx.actors.projectAdmin.token, json: newTokenBody }), 201);
  return `/api/tokens/${created.id}`;
}

export const rows: MatrixRow[] = [
  {
    endpoint: 'POST /api/tokens',
    path: () => '/api/tokens',
    body: () => newTokenBody,
    expect: { ...everyone(201), anonymous: 401 },
  },
  {
    endpoint: 'GET /api/tokens',
    path: () => '/api/tokens',
    expect: { ...everyone(200), anonymous: 401 },
  },
  {
    // Only its owner (the project's ADMIN here) sees a token; to anyone else it does not exist.
    endpoint: 'GET /api/tokens/:id',
    path: newTokenPath,
    expect: { ...everyone(404), anonymous: 401, projectAdmin: 200 },
  },
  {
    // Only its owner revokes a token.
    endpoint: 'DELETE /api/tokens/:id',
    path: newTokenPath,
    expect: { ...everyone(404), anonymous: 401, projectAdmin: 200 },
  },
];
