// Personal access tokens.
import { declareRoutes } from '../route-types.js';

export const TOKEN_ROUTES = declareRoutes({
  createToken: {
    method: 'POST',
    path: '/api/tokens',
    auth: 'session',
    request: 'CreateTokenRequest',
    response: 'CreatedPersonalAccessToken',
    status: 201,
    errors: ['NOT_FOUND','RATE_LIMITED'],
    errorNotes: {
      429: 'RATE_LIMITED: the account already has 100 live tokens; revoke one (Retry-After)',
    },
    tag: 'tokens',
    summary: 'Create a personal access token (with a session only)',
    description: 'For CI and scripts: a `bcp_` token (40 characters: 30 random base62 characters and 6 encoding their CRC32) that is used as `Authorization: Bearer bcp_…` on every API endpoint, the media paths and the events WebSocket. It is shown only in this answer and stored as its SHA-256. `read`: GET and HEAD only (and the events stream); `write`: all its owner may do except reviews; `review`: what `read` may, plus reviews (PUT and DELETE /api/files/{id}/review), which `write` does not include, so a CI token that publishes cannot approve its own release gate. With `projectIds` (projects the caller belongs to, else 404), other projects do not exist for it (404, absent from lists and events) and it cannot create or join projects (403 INSUFFICIENT_SCOPE). It never grants more than its owner has at the moment of use. Tokens always expire (`expiresIn`, 1 hour to 366 days); unknown, revoked or expired ones get 401 UNAUTHENTICATED and cannot be refreshed. Not accepted on /api/auth/* (except GET /api/auth/me) nor /api/tokens: 403 INSUFFICIENT_SCOPE. At most 100 live tokens per account: the 101st is 429 RATE_LIMITED until one is revoked or expires.',
  },
  listTokens: {
    method: 'GET',
    path: '/api/tokens',
    auth: 'session',
    response: 'PersonalAccessToken[]',
    status: 200,
    tag: 'tokens',
    summary: "The caller's live personal access tokens, newest first (with a session only)",
  },
  getToken: {
    method: 'GET',
    path: '/api/tokens/:id',
    auth: 'session',
    params: { id: 'Token' },
    response: 'PersonalAccessToken',
    status: 200,
    tag: 'tokens',
    summary: 'One of your live personal access tokens, without its secret (with a session only)',
  },
  deleteToken: {
    method: 'DELETE',
    path: '/api/tokens/:id',
    auth: 'session',
    params: { id: 'Token' },
    response: 'Deleted',
    status: 200,
    tag: 'tokens',
    summary: 'Revoke one of your personal access tokens (with a session only): it stops working at once',
  },
});
