import { everyone, type MatrixRow } from '../fixture.js';

/** Only the site ADMIN administers the site; the project ADMIN's tokens carry a MEMBER's site role (403). */
const siteAdminOnly = { ...everyone(403), anonymous: 401, siteAdminNonMember: 200 };

export const rows: MatrixRow[] = [
  { endpoint: 'GET /api/admin/storage', path: () => '/api/admin/storage?by=user&top=3', expect: siteAdminOnly },
  { endpoint: 'GET /api/admin/storage (by project)', path: () => '/api/admin/storage?by=project', expect: siteAdminOnly },
  { endpoint: 'GET /api/admin/users', path: () => '/api/admin/users', expect: siteAdminOnly },
  { endpoint: 'GET /api/admin/jobs', path: () => '/api/admin/jobs?state=failed', expect: siteAdminOnly },
  { endpoint: 'POST /api/admin/jobs/:id/retry', path: async (fx) => `/api/admin/jobs/${await fx.newFailedJob()}/retry`, expect: siteAdminOnly },
  {
    // Activating a fresh member changes nothing for the others' calls.
    endpoint: 'PUT /api/admin/users/:id/active',
    path: async (fx) => `/api/admin/users/${await fx.newMember()}/active`,
    body: () => ({ active: true }),
    expect: siteAdminOnly,
  },
];
