import { adminOnly, anyMember, everyone, expectStatus, type Fixture, type MatrixRow } from '../fixture.js';

/** A fresh cut of the shared project, put in the trash by its ADMIN: a MEMBER neither deleted it nor is ADMIN. */
async function trashedCut(fx: Fixture): Promise<string> {
  const cutId = await fx.newCut();
  await expectStatus(fx.api.request('DELETE', `/api/cuts/${cutId}`, { token: fx.actors.projectAdmin.token }), 200);
  return cutId;
}

export const rows: MatrixRow[] = [
  { endpoint: 'GET /api/projects/:id/trash', path: (fx) => `/api/projects/${fx.project.id}/trash`, expect: anyMember() },
  // A fresh project each call: emptying the shared one's trash would purge what the leak check below trashed.
  { endpoint: 'DELETE /api/projects/:id/trash', path: async (fx) => `/api/projects/${(await fx.newProject()).id}/trash`, expect: adminOnly(202) },
  { endpoint: 'GET /api/trash', path: () => '/api/trash', expect: { ...everyone(200), anonymous: 401 } },
  { endpoint: 'POST /api/trash/:kind/:id/restore', path: async (fx) => `/api/trash/cut/${await trashedCut(fx)}/restore`, expect: adminOnly(200) },
  { endpoint: 'DELETE /api/trash/:kind/:id', path: async (fx) => `/api/trash/cut/${await trashedCut(fx)}`, expect: adminOnly(202) },
];
