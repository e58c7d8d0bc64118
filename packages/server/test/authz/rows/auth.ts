import { randomUUID } from 'node:crypto';
import { everyone, expectStatus, type MatrixRow, PNG_BYTES } from '../fixture.js';

/** A multipart form holding a small PNG as `image`. */
function avatarForm(): FormData {
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(PNG_BYTES)]), 'avatar.png');
  return form;
}

const signedIn = { ...everyone(200), anonymous: 401 };

export const rows: MatrixRow[] = [
  {
    endpoint: 'POST /api/auth/register',
    path: () => '/api/auth/register',
    body: () => ({ email: `new-${randomUUID()}@example.com`, password: 'correct horse battery', name: 'New' }),
    expect: everyone(201),
  },
  {
    endpoint: 'POST /api/auth/login',
    path: () => '/api/auth/login',
    body: async (fx) => {
      const user = await fx.api.register();
      return { email: user.user.email, password: user.password };
    },
    expect: everyone(200),
  },
  {
    endpoint: 'POST /api/auth/refresh',
    path: () => '/api/auth/refresh',
    body: async (fx) => ({ refreshToken: (await fx.api.register()).refreshToken }),
    expect: everyone(200),
  },
  {
    endpoint: 'POST /api/auth/logout',
    path: () => '/api/auth/logout',
    body: async (fx) => ({ refreshToken: (await fx.api.register()).refreshToken }),
    expect: everyone(200),
  },
  {
    endpoint: 'GET /api/auth/me',
    path: () => '/api/auth/me',
    expect: signedIn,
  },
  // Each actor changes its own account; DELETE /api/auth/me is in NOT_IN_MATRIX (it would delete the actors).
  { endpoint: 'PUT /api/auth/me', path: () => '/api/auth/me', body: () => ({ name: 'Renamed' }), expect: signedIn },
  { endpoint: 'GET /api/auth/me/notifications', path: () => '/api/auth/me/notifications', expect: signedIn },
  { endpoint: 'PUT /api/auth/me/notifications', path: () => '/api/auth/me/notifications', body: () => ({ email: { digest: 'weekly' } }), expect: signedIn },
  { endpoint: 'PUT /api/auth/me/avatar', path: () => '/api/auth/me/avatar', body: avatarForm, expect: signedIn },
  { endpoint: 'DELETE /api/auth/me/avatar', path: () => '/api/auth/me/avatar', expect: signedIn },
  {
    endpoint: 'POST /api/auth/password',
    path: () => '/api/auth/password',
    // The fixture's users keep their password (register's default): only their other sessions, none, end.
    body: () => ({ currentPassword: 'correct horse battery', newPassword: 'correct horse battery' }),
    expect: signedIn,
  },
  {
    endpoint: 'GET /uploads/avatars/:name',
    path: async (fx) => {
      const owner = await fx.api.register();
      const set = await expectStatus(fx.api.request('PUT', '/api/auth/me/avatar', { token: owner.accessToken, body: avatarForm() }), 200);
      return set.avatarUrl;
    },
    expect: signedIn,
  },
  // The matrix server has no identity provider configured: every IdP route says so to everyone alike.
  { endpoint: 'GET /api/auth/idp', path: () => '/api/auth/idp', expect: everyone(404) },
  { endpoint: 'GET /api/auth/idp/callback', path: () => '/api/auth/idp/callback?code=x&state=y', expect: everyone(404) },
  {
    endpoint: 'POST /api/auth/idp/exchange',
    path: () => '/api/auth/idp/exchange',
    body: () => ({ code: 'one-time', redirectUri: 'http://127.0.0.1:1/callback' }),
    expect: everyone(404),
  },
  {
    endpoint: 'POST /api/auth/idp/link',
    path: () => '/api/auth/idp/link',
    body: () => ({ code: 'one-time', redirectUri: 'http://127.0.0.1:1/callback', codeVerifier: 'verifier' }),
    expect: everyone(404),
  },
];
