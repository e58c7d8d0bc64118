import { randomUUID } from 'node:crypto';
import { adminOnly, anyMember, everyone, type MatrixRow } from '../fixture.js';

export const rows: MatrixRow[] = [
  {
    endpoint: 'GET /api/projects',
    path: () => '/api/projects',
    expect: { ...everyone(200), anonymous: 401 },
  },
  {
    endpoint: 'POST /api/projects',
    path: () => '/api/projects',
    body: () => ({ name: 'Created' }),
    expect: { ...everyone(201), anonymous: 401 },
    // A token limited to projects cannot create one (it would reach beyond them).
    tokens: { writeTokenOtherProject: 403 },
  },
  {
    endpoint: 'GET /api/projects/:id',
    path: (fx) => `/api/projects/${fx.project.id}`,
    expect: anyMember(),
  },
  {
    endpoint: 'PUT /api/projects/:id',
    path: (fx) => `/api/projects/${fx.project.id}`,
    body: () => ({ name: 'Renamed' }),
    expect: adminOnly(),
  },
  {
    endpoint: 'DELETE /api/projects/:id',
    path: async (fx) => `/api/projects/${(await fx.newProject()).id}`,
    expect: adminOnly(),
  },
  {
    endpoint: 'POST /api/projects/:id/invite',
    path: (fx) => `/api/projects/${fx.project.id}/invite`,
    body: () => ({ email: `invitee-${randomUUID()}@example.com`, role: 'MEMBER' }),
    expect: adminOnly(201),
  },
  {
    endpoint: 'PUT /api/projects/:id/members/:userId',
    path: async (fx) => `/api/projects/${fx.project.id}/members/${await fx.newMember()}`,
    body: () => ({ role: 'ADMIN' }),
    expect: adminOnly(),
  },
  {
    endpoint: 'DELETE /api/projects/:id/members/:userId',
    path: async (fx) => `/api/projects/${fx.project.id}/members/${await fx.newMember()}`,
    expect: adminOnly(),
  },
  {
    // Leaving: any member may remove themselves, except the last ADMIN.
    endpoint: 'DELETE /api/projects/:id/members/:userId (self)',
    path: async (fx, actor) => `/api/projects/${(await fx.newProject()).id}/members/${actor.userId ?? randomUUID()}`,
    expect: { anonymous: 401, nonMember: 404, member: 200, projectAdmin: 409, siteAdminNonMember: 404 },
  },
  {
    endpoint: 'GET /uploads/images/:name (project cover)',
    path: (fx) => fx.projectImageUrl,
    expect: anyMember(),
  },
  {
    endpoint: 'HEAD /uploads/images/:name (project cover)',
    path: (fx) => fx.projectImageUrl,
    expect: anyMember(),
  },
  {
    endpoint: 'GET /uploads/images/:name (vibe image)',
    path: (fx) => fx.vibeImageUrl,
    expect: anyMember(),
  },
];
