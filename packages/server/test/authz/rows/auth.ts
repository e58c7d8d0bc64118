import { randomUUID } from 'node:crypto';
import { everyone, type MatrixRow } from '../fixture.js';

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
    expect: { ...everyone(200), anonymous: 401 },
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
