import { FORM_SCHEMAS, MAX_UPLOAD_BYTES, RECORD_SCHEMAS, REQUEST_SCHEMAS, sizeInMiB } from '@bandcollab/sdk/contract';
import { z } from 'zod';
import { SETTINGS } from '../core/config.js';
import { SERVER_VERSION } from '../version.js';

// The OpenAPI 3.1 document, served at GET /api/openapi.json. Its schemas (records and request bodies)
// are generated from the contract's zod schemas (@bandcollab/sdk/contract); paths and prose are written here;
// test/openapi.test.ts checks that every route the server registers is described here.

type Schema = Record<string, unknown>;

/** A setting named with its default, as the prose states it: `IDLE_TIMEOUT_SECONDS (60)`. */
const setting = (name: 'REGISTER_MAX_PER_ADDRESS' | 'REGISTER_WINDOW_SECONDS' | 'LOGIN_MAX_FAILURES' | 'LOGIN_MAX_FAILURES_PER_ADDRESS' | 'LOGIN_WINDOW_SECONDS' | 'EVENTS_HEARTBEAT_SECONDS' | 'IDLE_TIMEOUT_SECONDS' | 'MAX_CONNECTIONS'): string =>
  `${name} (${SETTINGS[name].default})`;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const uuid: Schema = { type: 'string', format: 'uuid' };

const json = (schema: Schema) => ({ content: { 'application/json': { schema } } });
const ok = (schema: Schema, text = 'OK') => ({ description: text, ...json(schema) });
const created = (schema: Schema) => ({
  description: 'Created',
  headers: { Location: { schema: { type: 'string' }, description: 'Path of the created record' } },
  ...json(schema),
});
const problem = (text: string, headers?: Record<string, Schema>) => ({
  description: text,
  ...(headers ? { headers } : {}),
  content: { 'application/problem+json': { schema: ref('Problem') } },
});
const RETRY_AFTER = { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait' } };
const PASSWORD_CHECKS_UNAVAILABLE =
  'UNAVAILABLE: too many password checks at once (Retry-After: 1), or the database is unreachable (Retry-After)';
/** Every 401 names the Bearer scheme. */
const unauthorized = (text: string) =>
  problem(text, {
    'WWW-Authenticate': {
      schema: { type: 'string' },
      description: 'Bearer; for TOKEN_EXPIRED: Bearer error="invalid_token", error_description="expired"',
    },
  });

const COMMON_ERRORS: Record<string, string> = {
  '400': 'VALIDATION_FAILED, INVALID_JSON',
  '401': 'UNAUTHENTICATED or TOKEN_EXPIRED',
  '403': 'FORBIDDEN: a member without the role the action needs',
  '404': 'NOT_FOUND: unknown, not a UUID, or not visible to the caller (non-members never get 403)',
  '409': 'Conflict',
  '413': 'PAYLOAD_TOO_LARGE / FILE_TOO_LARGE',
  '415': 'UNSUPPORTED_MEDIA_TYPE / UNSUPPORTED_FILE_TYPE',
  '429': 'RATE_LIMITED, with Retry-After',
  '503': 'UNAVAILABLE: the database is unreachable, with Retry-After',
  '507': "INSUFFICIENT_STORAGE: the upload would leave less than MIN_FREE_DISK_MB free / QUOTA_EXCEEDED: it would take the uploader over USER_QUOTA_MB",
};
const VIBE_NAME_RULE = "A vibe's name is unique within its project, compared case-insensitively after trimming.";
const VIBE_NAME_TAKEN = 'NAME_TAKEN: the project already has a vibe of this name';
const CUT_NAME_RULE = "A cut's name is unique within its vibe, compared case-insensitively after trimming.";
const CUT_NAME_TAKEN = 'NAME_TAKEN: the vibe already has a cut of this name';

const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => {
      const text = COMMON_ERRORS[String(status)]!;
      if (status === 401) return [String(status), unauthorized(text)];
      return [String(status), problem(text, status === 429 || status === 503 ? RETRY_AFTER : undefined)];
    }),
  );

/** The auth cookies, set by register, login, refresh and the IdP flows. */
const AUTH_COOKIES = {
  'Set-Cookie': {
    schema: { type: 'string' },
    description:
      `access_token (HttpOnly; SameSite=Lax; Path=/; Max-Age=${SETTINGS.ACCESS_TOKEN_TTL_SECONDS.default}) and refresh_token (HttpOnly; SameSite=Strict; ` +
      'Path=/api/auth; Max-Age = seconds left in the session with rememberMe, else a session cookie); both Secure when ' +
      'PUBLIC_URL is https or COOKIE_SECURE=true.',
  },
  'Cache-Control': { schema: { type: 'string', const: 'no-store' }, description: 'Responses that carry tokens are never cached' },
};
const withCookies = (response: Record<string, unknown>) => ({
  ...response,
  headers: { ...(response.headers as Record<string, unknown> | undefined), ...AUTH_COOKIES },
});

const bearer = [{ bearer: [] }];
const mediaAuth = [{ bearer: [] }, { accessCookie: [] }];
const idParam = (paramName: string, text: string) => ({ name: paramName, in: 'path', required: true, description: text, schema: uuid });

const multipart = (formName: keyof typeof FORM_SCHEMAS) => ({ 'multipart/form-data': { schema: ref(formName) } });

const fileBytes = (disposition: string) => ({
  description: 'The bytes (206 with Content-Range for a single satisfiable Range)',
  headers: {
    'Content-Type': { schema: { type: 'string' }, description: 'The file type table MIME type' },
    'Content-Disposition': { schema: { type: 'string' }, description: disposition },
    ETag: { schema: { type: 'string' }, description: 'The quoted sha256' },
    'Last-Modified': { schema: { type: 'string' } },
    'Accept-Ranges': { schema: { type: 'string', const: 'bytes' } },
    'X-Content-Type-Options': { schema: { type: 'string', const: 'nosniff' } },
    'Content-Security-Policy': { schema: { type: 'string', const: "default-src 'none'; sandbox" } },
  },
  content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
});
const byteResponses = (disposition: string) => ({
  '200': fileBytes(disposition),
  '206': { description: 'Partial content for a single byte range (overlapping or adjacent ranges are merged into one)' },
  '304': { description: 'If-None-Match matched the ETag, or without it If-Modified-Since is not before Last-Modified' },
  '416': {
    description: 'Range not satisfiable',
    headers: { 'Content-Range': { schema: { type: 'string' }, description: 'bytes */<size>' } },
    content: { 'application/problem+json': { schema: ref('Problem') } },
  },
});
const sharedBytes = byteResponses('inline; filename="…"; filename*=UTF-8\'\'…, or attachment with ?download=1');
/** A cut's files as one stored ZIP. */
const archiveBytes = {
  description: 'A stored (uncompressed) ZIP, written as it is sent; ZIP64 past 4 GiB or 65,535 entries',
  headers: {
    'Content-Length': { schema: { type: 'integer' }, description: 'Exact, computed before the first byte' },
    'Content-Disposition': { schema: { type: 'string' }, description: 'attachment; filename="<cut name>.zip"; filename*=UTF-8\'\'…' },
    'Accept-Ranges': { schema: { type: 'string', const: 'none' } },
    'X-Content-Type-Options': { schema: { type: 'string', const: 'nosniff' } },
    'Content-Security-Policy': { schema: { type: 'string', const: "default-src 'none'; sandbox" } },
  },
  content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
};
const ARCHIVE_ENTRIES =
  "Entries are the cut's files in upload order, named `<display name>.<ext>` as downloads are; repeated names get ` (2)`, ` (3)`… " +
  '(compared case-insensitively), and a slash in a name becomes `_`. A cut without files is an empty ZIP (22 bytes). ' +
  'No ranges: a broken download starts again.';
const ACCESS_COUNTING =
  "Counts as an access of the link (the list's accessCount and lastAccessedAt): a GET of the page, of the bytes or of the ZIP. " +
  'Not counted: HEAD, the JSON description, a Range that does not start at byte 0 (a download continued, or a seek), and ' +
  'what a browser loads into the page\'s players and pictures (Sec-Fetch-Dest audio, video, track, image): the page view counted.';
const tokenParam = { name: 'token', in: 'path', required: true, schema: { type: 'string' } };
const shareList = (what: string) => ({
  tags: ['shares'],
  security: bearer,
  summary: `The live links of the ${what} (never their tokens), oldest first`,
  description: 'Expired and revoked links are not listed. ' + ACCESS_COUNTING,
  responses: { '200': ok({ type: 'array', items: ref('ShareRecord') }), ...errors(401, 404) },
});

/** Named schemas as `components.schemas` entries, generated from the contract; references between them become `$ref`s. */
function generatedSchemas(named: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, Schema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const generated = z.toJSONSchema(registry, { target: 'draft-2020-12', io, uri: (id) => `#/components/schemas/${id}` });
  // Each comes out as a standalone JSON Schema document; inside components.schemas it is a plain schema.
  return Object.fromEntries(Object.entries(generated.schemas).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema]));
}

// Records as the server sends them; request bodies and forms as a client may send them (before trimming and defaults).
const schemas: Record<string, Schema> = {
  ...generatedSchemas(RECORD_SCHEMAS, 'output'),
  ...generatedSchemas({ ...REQUEST_SCHEMAS, ...FORM_SCHEMAS }, 'input'),
};

const paths: Record<string, Record<string, unknown>> = {
  '/api/health': {
    get: { tags: ['operations'], summary: 'Liveness and database reachability', responses: { '200': ok(ref('Health')), ...errors(503) } },
  },
  '/api/openapi.json': {
    get: { tags: ['operations'], summary: 'This document', responses: { '200': ok({ type: 'object' }) } },
  },
  '/api/reference': {
    get: {
      tags: ['operations'],
      summary: 'This document as a Markdown reference (every endpoint, then every schema)',
      responses: { '200': { description: 'OK', content: { 'text/markdown': { schema: { type: 'string' } } } } },
    },
  },
  '/api/auth/register': {
    post: {
      tags: ['auth'],
      summary: 'Create an account (the first on an empty database is site ADMIN); with inviteToken, accept that invitation too',
      description:
        'Sets the access_token and refresh_token cookies as a login without rememberMe. Registering never by itself redeems ' +
        'invitations sent to the email: only inviteToken does, under the rules of POST /api/invitations/accept. An invitation ' +
        'to another email (403 INVITATION_EMAIL_MISMATCH) or an unknown, revoked, used or expired one (404) creates nothing.',
      requestBody: {
        required: true,
        ...json(ref('RegisterRequest')),
      },
      responses: {
        '201': withCookies(created(ref('AuthResult'))),
        ...errors(400, 413, 415),
        '403': problem('INVITATION_EMAIL_MISMATCH: the inviteToken names an invitation to another email'),
        '404': problem('NOT_FOUND: the inviteToken names no pending invitation'),
        '409': problem('EMAIL_TAKEN'),
        '429': problem(`RATE_LIMITED: more than ${setting('REGISTER_MAX_PER_ADDRESS')} registrations from this client address within ${setting('REGISTER_WINDOW_SECONDS')}; Retry-After`, RETRY_AFTER),
        '503': problem(PASSWORD_CHECKS_UNAVAILABLE, RETRY_AFTER),
      },
    },
  },
  '/api/auth/login': {
    post: {
      tags: ['auth'],
      summary: 'Log in; starts a session of 1 day, or 30 days with rememberMe',
      description:
        'Every attempt is counted before its password is checked, so simultaneous attempts get at most the allowance: ' +
        `${setting('LOGIN_MAX_FAILURES')} failures per email and client address, and ${setting('LOGIN_MAX_FAILURES_PER_ADDRESS')} per client ` +
        `address over all emails, within ${setting('LOGIN_WINDOW_SECONDS')}. Past either, 429 RATE_LIMITED with Retry-After (seconds ` +
        'until the window frees an attempt), even for the right password, and no password is checked. A successful login is ' +
        'not counted and clears the failures of its email from its address. Password checks run a few at a time: past a ' +
        'short queue, 503 UNAVAILABLE with Retry-After: 1 (not counted as an attempt).',
      requestBody: {
        required: true,
        ...json(ref('LoginRequest')),
      },
      responses: {
        '200': withCookies(ok(ref('AuthResult'))),
        ...errors(400, 413, 415, 429),
        '401': unauthorized('INVALID_CREDENTIALS: unknown email or wrong password, alike'),
        '503': problem(PASSWORD_CHECKS_UNAVAILABLE, RETRY_AFTER),
      },
    },
  },
  '/api/auth/refresh': {
    post: {
      tags: ['auth'],
      summary: 'Rotate the refresh token (body, else the refresh_token cookie); the session keeps its expiry',
      description: 'Presenting an already-rotated refresh token revokes its whole session.',
      requestBody: { required: false, ...json(ref('RefreshRequest')) },
      responses: {
        '200': withCookies(ok(ref('TokenPair'))),
        ...errors(400, 413, 415),
        '401': unauthorized('INVALID_REFRESH_TOKEN: missing, unknown, expired, revoked or already rotated'),
      },
    },
  },
  '/api/auth/logout': {
    post: {
      tags: ['auth'],
      summary: 'Revoke the session named by refreshToken, else the cookie, else the Bearer token; clears both cookies',
      description:
        'The first of these that is present decides (an unknown refresh token revokes nothing). Access tokens of the session ' +
        'stop working at once. Answers 200 also when nothing was active. Open WebSocket connections of the session close with 4401.',
      requestBody: { required: false, ...json(ref('RefreshRequest')) },
      security: [{}, { bearer: [] }],
      responses: {
        '200': {
          ...ok(ref('OkResult')),
          headers: { 'Set-Cookie': { schema: { type: 'string' }, description: 'Both auth cookies cleared (Max-Age=0)' } },
        },
        ...errors(400, 413, 415),
      },
    },
  },
  '/api/auth/me': {
    get: {
      tags: ['auth'],
      security: bearer,
      summary: 'The caller (also with a personal access token: its owner)',
      responses: {
        '200': {
          ...ok(ref('Me')),
          headers: {
            'Band-Token-Scope': { schema: { type: 'string', enum: ['read', 'write'] }, description: 'Only with a personal access token: its scope' },
            'Band-Token-Expires': { schema: { type: 'string', format: 'date-time' }, description: 'Only with a personal access token: when it expires' },
            'Band-Token-Projects': { schema: { type: 'string' }, description: 'Only with a personal access token limited to projects: their ids, comma-separated' },
          },
        },
        ...errors(401),
      },
    },
    put: {
      tags: ['account'],
      security: bearer,
      summary: "Change the caller's display name",
      description: 'Every project of the caller hears member.updated with its new member record.',
      requestBody: { required: true, ...json(ref('UpdateMeRequest')) },
      responses: { '200': ok(ref('Me')), ...errors(400, 401, 413, 415) },
    },
    delete: {
      tags: ['account'],
      security: bearer,
      summary: "Delete the caller's account",
      description:
        'Confirmed by `password`, or, for an account without one (created through the identity provider), `confirm` set to its ' +
        'email. Refused while the caller is the last ADMIN of a project that has other members. Projects where the caller is ' +
        'the only member are deleted with everything in them; the caller leaves the others (member.removed), where the files ' +
        'they uploaded stay, with uploadedBy {id: null, name: "Former member", avatarUrl: null}. Share links and pending ' +
        'invitations the caller made go; covers and vibe images they uploaded stay. Every session ends at once (its WebSocket ' +
        'connections close with 4401), as do refresh and personal access tokens; the avatar is removed. Clears both auth cookies.',
      requestBody: { required: true, ...json(ref('DeleteAccountRequest')) },
      responses: {
        '200': ok(ref('Deleted')),
        ...errors(400, 401, 413, 415),
        '401': unauthorized('INVALID_CREDENTIALS: the password is wrong (counted by the login abuse limits); UNAUTHENTICATED, TOKEN_EXPIRED'),
        '409': problem('LAST_ADMIN: the caller is the last ADMIN of a project that has other members (the detail names it)'),
        '429': problem('RATE_LIMITED: too many failed logins of this email, with Retry-After', RETRY_AFTER),
        '503': problem(PASSWORD_CHECKS_UNAVAILABLE, RETRY_AFTER),
      },
    },
  },
  '/api/auth/me/avatar': {
    put: {
      tags: ['account'],
      security: bearer,
      summary: "Set the caller's avatar",
      description:
        'Stored like a project cover: counted in the caller\'s storage statistics (breakdown.images) and quota. avatarUrl ' +
        'becomes /uploads/avatars/<uuid>.<ext>, served to any signed-in user; the avatar it replaces is removed. Every ' +
        'project of the caller hears member.updated.',
      requestBody: { required: true, content: multipart('AvatarForm') },
      responses: {
        '200': ok(ref('Me')),
        ...errors(400, 401, 413, 415, 507),
      },
    },
    delete: {
      tags: ['account'],
      security: bearer,
      summary: "Remove the caller's avatar (avatarUrl null); its bytes go",
      responses: { '200': ok(ref('Me')), ...errors(401) },
    },
  },
  '/api/auth/password': {
    post: {
      tags: ['account'],
      security: bearer,
      summary: "Change the caller's password",
      description:
        '`currentPassword` is required unless the account has no password yet (created through the identity provider: this ' +
        'sets its first). Every other session of the account ends at once (its access and refresh tokens, its WebSocket ' +
        'connections); the caller\'s session stays, and personal access tokens (not sessions) keep working. The one endpoint an account with a ' +
        'one-time password (the reset-password server command) may call: until then every other answers 403 ' +
        'PASSWORD_CHANGE_REQUIRED.',
      requestBody: { required: true, ...json(ref('ChangePasswordRequest')) },
      responses: {
        '200': ok(ref('OkResult')),
        ...errors(400, 401, 413, 415),
        '401': unauthorized('INVALID_CREDENTIALS: the current password is wrong (counted by the login abuse limits); UNAUTHENTICATED, TOKEN_EXPIRED'),
        '429': problem('RATE_LIMITED: too many failed logins of this email, with Retry-After', RETRY_AFTER),
        '503': problem(PASSWORD_CHECKS_UNAVAILABLE, RETRY_AFTER),
      },
    },
  },
  '/api/tokens': {
    post: {
      tags: ['tokens'],
      security: bearer,
      summary: 'Create a personal access token (with a session only)',
      description:
        'For CI and scripts: a `bcp_` token (40 characters: 30 random base62 characters and 6 encoding their CRC32) that is ' +
        'used as `Authorization: Bearer bcp_…` on every API endpoint, the media paths and the events WebSocket. It is shown ' +
        'only in this answer and stored as its SHA-256. `read`: GET and HEAD only (and the events stream); `write`: all ' +
        'its owner may do. With `projectIds` (projects the caller belongs to, else 404), other projects do not exist for it ' +
        '(404, absent from lists and events) and it cannot create or join projects (403 INSUFFICIENT_SCOPE). It never grants ' +
        'more than its owner has at the moment of use. Tokens always expire (`expiresIn`, 1 hour to 366 days); unknown, revoked ' +
        'or expired ones get 401 UNAUTHENTICATED and cannot be refreshed. Not accepted on /api/auth/* (except GET /api/auth/me) ' +
        'nor /api/tokens: 403 INSUFFICIENT_SCOPE.',
      requestBody: { required: true, ...json(ref('CreateTokenRequest')) },
      responses: { '201': created(ref('CreatedPersonalAccessToken')), ...errors(400, 401, 403, 404, 413, 415) },
    },
    get: {
      tags: ['tokens'],
      security: bearer,
      summary: "The caller's live personal access tokens, newest first (with a session only)",
      responses: { '200': ok({ type: 'array', items: ref('PersonalAccessToken') }), ...errors(401, 403) },
    },
  },
  '/api/tokens/{id}': {
    parameters: [idParam('id', 'Token id')],
    delete: {
      tags: ['tokens'],
      security: bearer,
      summary: 'Revoke one of your personal access tokens (with a session only): it stops working at once',
      responses: { '200': ok(ref('Deleted')), ...errors(401, 403, 404) },
    },
  },
  '/api/auth/idp': {
    get: {
      tags: ['identity provider'],
      summary: 'Start sign-in at the OpenID Connect provider (authorization code + PKCE S256, state, nonce)',
      description:
        'Keeps the flow in a signed, HttpOnly, 10-minute cookie. `redirect` is honoured only as a same-origin path. ' +
        '`cliRedirect` (a loopback http URL with a port) makes the callback hand a one-time code to the command-line client ' +
        'instead of setting cookies; every command-line flow must send `code_challenge`, base64url(SHA-256(verifier)) of a ' +
        'random verifier it keeps, and present that verifier to redeem the code. ' +
        '`link=1` links instead of signing in: the caller must be signed in (the access_token cookie, or a Bearer token); ' +
        'the callback links the provider subject that comes back to the caller\'s account, whatever the provider\'s email, ' +
        'and sets no cookies (the caller stays signed in as they were). With a Bearer token (a program, not the browser), ' +
        'cliRedirect and code_challenge are required and the 302 goes to this endpoint with `flow=<sealed flow>`: the ' +
        'address to open in the browser, which sets the flow cookie there and goes on to the provider. The callback then ' +
        'hands the loopback a one-time code, and the link is made only by POST /api/auth/idp/link with the caller\'s token ' +
        'and the verifier. `flow=` resumes only such command-line links.',
      security: [{}, { bearer: [] }],
      parameters: [
        { name: 'redirect', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'cliRedirect', in: 'query', required: false, schema: { type: 'string', format: 'uri' } },
        {
          name: 'code_challenge',
          in: 'query',
          required: false,
          description: 'Required with cliRedirect for a sign-in: S256 of the verifier the exchange must present',
          schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
        },
        { name: 'link', in: 'query', required: false, description: '1: link the provider to the signed-in caller', schema: { type: 'string', enum: ['1'] } },
        { name: 'flow', in: 'query', required: false, description: 'A command-line link flow handed off by a Bearer-authenticated link=1', schema: { type: 'string' } },
      ],
      responses: {
        '302': {
          description:
            'To the provider (or, for link=1 with a Bearer token, to this endpoint with flow=); to APP_URL (or cliRedirect) with ' +
            '?authError=provider_unavailable when its discovery fails, or expired_flow / invalid_state for a flow= past its ' +
            '10 minutes, tampered with, or not a command-line link',
        },
        ...errors(400),
        '401': unauthorized('UNAUTHENTICATED / TOKEN_EXPIRED: link=1 without a signed-in caller'),
        '404': problem('IDP_DISABLED'),
      },
    },
  },
  '/api/auth/idp/callback': {
    get: {
      tags: ['identity provider'],
      summary: 'The provider returns here; finds or creates the account, sets the auth cookies (a 1-day session), redirects to APP_URL',
      description:
        'Finds the account linked to the provider subject. Else, when an account has the provider\'s email, it is not linked ' +
        '(whoever registered the address may not own it): authError=account_exists, and the owner links explicitly with ' +
        'link=1. Else it creates the account, and redeems the pending invitations of its email only when the provider says ' +
        'email_verified: true. A browser link=1 flow links the subject to the account that started it and sets no cookies: ' +
        'it lands on APP_URL (plus the redirect path). A command-line link=1 flow lands on the loopback cliRedirect with ' +
        '?code=<one-time code> for POST /api/auth/idp/link, linking nothing by itself. Failures redirect to APP_URL ' +
        'with ?authError=<code> and set nothing. For command-line sign-ins it redirects to the loopback cliRedirect with ' +
        '?code=<one-time code> (60 s, single use, exchanged only with the verifier of the flow\'s code_challenge), and failures ' +
        'go there too. authError is one of expired_flow (flow cookie missing or past its 10 minutes, or the linking account ' +
        'deleted meanwhile), invalid_state, access_denied, provider_error, provider_unavailable, exchange_failed (code refused, ' +
        'replayed, or ID token invalid), email_missing, account_exists (an account has that email and is not linked to this ' +
        'subject), identity_in_use (link=1 for a subject linked to another account), server_error.',
      responses: { '302': { description: 'To APP_URL (or the loopback redirect of a command-line flow)' }, '404': problem('IDP_DISABLED') },
    },
  },
  '/api/auth/idp/exchange': {
    post: {
      tags: ['identity provider'],
      summary: 'Exchange the one-time code of a command-line sign-in, with its verifier, for tokens (a 1-day session)',
      description:
        'codeVerifier is the random verifier whose S256 challenge started the sign-in (code_challenge): a code caught on its ' +
        'way to the loopback listener is worth nothing without it. Any refused exchange, a missing or wrong verifier ' +
        'included, uses the code up.',
      requestBody: {
        required: true,
        ...json(ref('IdpExchangeRequest')),
      },
      responses: {
        '200': withCookies(ok(ref('AuthResult'))),
        ...errors(400, 413, 415),
        '401': unauthorized('INVALID_CREDENTIALS: unknown, used or expired code, another redirectUri, a missing or wrong codeVerifier, or a link code'),
        '404': problem('IDP_DISABLED'),
      },
    },
  },
  '/api/auth/idp/link': {
    post: {
      tags: ['identity provider'],
      security: bearer,
      summary: "Redeem the one-time code of a command-line link=1 flow, with its verifier: links the provider account to the caller's",
      description:
        'Only the account that started the link, with the verifier of its code_challenge, for the loopback redirect the ' +
        'code was sent to. Any refused attempt uses the code up. The caller\'s session is unchanged.',
      requestBody: {
        required: true,
        ...json(ref('IdpExchangeRequest')),
      },
      responses: {
        '200': ok(ref('OkResult')),
        ...errors(400, 413, 415),
        '401': unauthorized(
          'UNAUTHENTICATED / TOKEN_EXPIRED: no valid token; INVALID_CREDENTIALS: unknown, used or expired code, another ' +
            'redirectUri or account, a missing or wrong codeVerifier, or a sign-in code',
        ),
        '404': problem('IDP_DISABLED'),
        '409': problem('IDENTITY_IN_USE: another account linked this provider account after the code was issued'),
      },
    },
  },
  '/api/projects': {
    get: { tags: ['projects'], security: bearer, summary: "The caller's projects, newest first", responses: { '200': ok({ type: 'array', items: ref('Project') }), ...errors(401) } },
    post: {
      tags: ['projects'],
      security: bearer,
      summary: 'Create a project; the caller becomes its ADMIN',
      requestBody: {
        required: true,
        content: {
          ...json(ref('CreateProjectRequest')).content,
          ...multipart('CreateProjectForm'),
        },
      },
      responses: {
        '201': created(ref('Project')),
        ...errors(400, 401, 413, 415, 507),
        '403': problem('INSUFFICIENT_SCOPE: a personal access token limited to projects cannot create one'),
      },
    },
  },
  '/api/projects/{id}': {
    parameters: [idParam('id', 'Project id')],
    get: { tags: ['projects'], security: bearer, summary: 'Project detail', responses: { '200': ok(ref('ProjectDetail')), ...errors(401, 404) } },
    put: {
      tags: ['projects'],
      security: bearer,
      summary: 'Update name, description or image (ADMIN); JSON image: null clears the image',
      requestBody: {
        required: true,
        content: {
          ...json(ref('UpdateProjectRequest')).content,
          ...multipart('UpdateProjectForm'),
        },
      },
      responses: { '200': ok(ref('UpdatedProject')), ...errors(400, 401, 403, 404, 413, 415, 507) },
    },
    delete: {
      tags: ['projects'],
      security: bearer,
      summary: 'Delete the project with its vibes, cuts, files and images, on disk too (ADMIN)',
      responses: { '200': ok(ref('Deleted')), ...errors(401, 403, 404) },
    },
  },
  '/api/projects/{id}/invite': {
    parameters: [idParam('id', 'Project id')],
    post: {
      tags: ['members'],
      security: bearer,
      summary: 'Invite by email (ADMIN): a 30-day invitation link, to send to the invitee',
      description:
        'The same answer whether or not the email has an account; nobody is added until the invitee accepts the link. ' +
        'Inviting a pending email again replaces its invitation (new link, role and 30 days; the old link stops working).',
      requestBody: { required: true, ...json(ref('InviteRequest')) },
      responses: {
        '201': { ...created(ref('InviteResult')), headers: { Location: { schema: { type: 'string' }, description: "The project's path" } } },
        ...errors(400, 401, 403, 404, 413, 415),
        '409': problem('ALREADY_MEMBER: the email of a member'),
      },
    },
  },
  '/api/projects/{id}/invitations/{invitationId}': {
    parameters: [idParam('id', 'Project id'), idParam('invitationId', 'Invitation id')],
    delete: {
      tags: ['members'],
      security: bearer,
      summary: 'Revoke a pending invitation (ADMIN): its link stops working',
      responses: { '200': ok(ref('Deleted'), 'Revoked; id is the invitation id'), ...errors(401, 403, 404) },
    },
  },
  '/api/invitations/{token}': {
    parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' }, description: 'The last path segment of the invitation link' }],
    get: {
      tags: ['members'],
      summary: 'What an invitation link offers, no authentication',
      responses: { '200': ok(ref('InvitationView')), '404': problem('NOT_FOUND: unknown, revoked, used or expired') },
    },
  },
  '/api/invitations/accept': {
    post: {
      tags: ['members'],
      security: bearer,
      summary: 'Accept an invitation link: the caller joins the project with the invitation\'s role',
      description:
        "The caller's email must equal the invitation's (case-insensitive), else 403 INVITATION_EMAIL_MISMATCH and the " +
        'invitation stays pending. The invitation is used up, and the project hears member.added (the caller is its actor). ' +
        'A caller who already is a member gets 409 ALREADY_MEMBER, and the invitation is used up all the same.',
      requestBody: { required: true, ...json(ref('AcceptInvitationRequest')) },
      responses: {
        '200': ok(ref('AcceptedInvitation')),
        ...errors(400, 401, 413, 415),
        '403': problem('INVITATION_EMAIL_MISMATCH; or INSUFFICIENT_SCOPE: a personal access token limited to projects cannot join one'),
        '404': problem('NOT_FOUND: unknown, revoked, used or expired'),
        '409': problem('ALREADY_MEMBER'),
      },
    },
  },
  '/api/projects/{id}/members/{userId}': {
    parameters: [idParam('id', 'Project id'), idParam('userId', 'Member user id')],
    put: {
      tags: ['members'],
      security: bearer,
      summary: "Change a member's role (ADMIN); the last ADMIN cannot be demoted",
      requestBody: { required: true, ...json(ref('UpdateMemberRequest')) },
      responses: { '200': ok(ref('Member')), ...errors(400, 401, 403, 404, 413, 415), '409': problem('LAST_ADMIN') },
    },
    delete: {
      tags: ['members'],
      security: bearer,
      summary: 'Remove a member (ADMIN), or leave (the member themselves); the last ADMIN cannot be removed',
      responses: { '200': ok(ref('Deleted'), 'Removed; id is the user id'), ...errors(401, 403, 404), '409': problem('LAST_ADMIN') },
    },
  },
  '/api/projects/{projectId}/vibes': {
    parameters: [idParam('projectId', 'Project id')],
    post: {
      tags: ['vibes'],
      security: bearer,
      summary: 'Create a vibe; it goes last',
      description: VIBE_NAME_RULE,
      requestBody: { required: true, content: { ...json(ref('CreateVibeRequest')).content, ...multipart('CreateVibeForm') } },
      responses: { '201': created(ref('Vibe')), ...errors(400, 401, 404, 413, 415, 507), '409': problem(VIBE_NAME_TAKEN) },
    },
  },
  '/api/vibes/reorder': {
    put: {
      tags: ['vibes'],
      security: bearer,
      summary: "Reorder one project's vibes: exactly its vibe ids, each once, in the new order",
      description:
        'Unknown or invisible ids: 404. Duplicates, an empty list, or ids of several projects: 400. A set that differs from ' +
        "the project's current vibes: 409 ORDER_CONFLICT. Positions run 0…n-1 afterwards.",
      requestBody: { required: true, ...json(ref('ReorderVibesRequest')) },
      responses: { '200': ok(ref('ReorderVibesResult')), ...errors(400, 401, 404, 413, 415), '409': problem('ORDER_CONFLICT') },
    },
  },
  '/api/vibes/{id}': {
    parameters: [idParam('id', 'Vibe id')],
    get: { tags: ['vibes'], security: bearer, summary: 'A vibe with its cuts', responses: { '200': ok(ref('VibeWithCuts')), ...errors(401, 404) } },
    put: {
      tags: ['vibes'],
      security: bearer,
      summary: 'Rename, or set or clear (JSON image: null) the image',
      description: VIBE_NAME_RULE,
      requestBody: {
        required: true,
        content: { ...json(ref('UpdateVibeRequest')).content, ...multipart('UpdateVibeForm') },
      },
      responses: { '200': ok(ref('Vibe')), ...errors(400, 401, 404, 413, 415, 507), '409': problem(VIBE_NAME_TAKEN) },
    },
    delete: {
      tags: ['vibes'],
      security: bearer,
      summary: 'Delete the vibe, its cuts and their files, on disk too',
      description: 'Any member may delete a vibe that is empty or holds only their own files; one holding files uploaded by someone else needs a project ADMIN (403, nothing deleted).',
      responses: { '200': ok(ref('Deleted')), ...errors(401, 403, 404) },
    },
  },
  '/api/vibes/{vibeId}/cuts': {
    parameters: [idParam('vibeId', 'Vibe id')],
    post: {
      tags: ['cuts'],
      security: bearer,
      summary: 'Create a cut',
      description: CUT_NAME_RULE,
      requestBody: { required: true, ...json(ref('CutNameRequest')) },
      responses: { '201': created(ref('Cut')), ...errors(400, 401, 404, 413, 415), '409': problem(CUT_NAME_TAKEN) },
    },
  },
  '/api/cuts/{id}': {
    parameters: [idParam('id', 'Cut id')],
    get: { tags: ['cuts'], security: bearer, summary: 'A cut with its files', responses: { '200': ok(ref('CutWithFiles')), ...errors(401, 404) } },
    put: {
      tags: ['cuts'],
      security: bearer,
      summary: 'Rename',
      description: CUT_NAME_RULE,
      requestBody: { required: true, ...json(ref('CutNameRequest')) },
      responses: { '200': ok(ref('Cut')), ...errors(400, 401, 404, 413, 415), '409': problem(CUT_NAME_TAKEN) },
    },
    delete: {
      tags: ['cuts'],
      security: bearer,
      summary: 'Delete the cut and its files, on disk too',
      description: 'Any member may delete a cut that is empty or holds only their own files; one holding files uploaded by someone else needs a project ADMIN (403, nothing deleted).',
      responses: { '200': ok(ref('Deleted')), ...errors(401, 403, 404) },
    },
  },
  '/api/cuts/{id}/move': {
    parameters: [idParam('id', 'Cut id')],
    put: {
      tags: ['cuts'],
      security: bearer,
      summary: 'Move the cut to another vibe of the same project',
      description: CUT_NAME_RULE,
      requestBody: { required: true, ...json(ref('MoveCutRequest')) },
      responses: {
        '200': ok(ref('Cut')),
        ...errors(401, 404, 413, 415),
        '400': problem('VALIDATION_FAILED, INVALID_JSON, or CROSS_PROJECT_MOVE'),
        '409': problem('NAME_TAKEN: the target vibe already has a cut of this name'),
      },
    },
  },
  '/api/cuts/{id}/archive': {
    parameters: [idParam('id', 'Cut id')],
    get: {
      tags: ['cuts'],
      security: mediaAuth,
      summary: "Every file of the cut as one ZIP (also HEAD), streamed from the stored files",
      description: ARCHIVE_ENTRIES,
      responses: { '200': archiveBytes, ...errors(401, 404) },
    },
  },
  '/api/cuts/{id}/share': {
    parameters: [idParam('id', 'Cut id')],
    post: {
      tags: ['shares'],
      security: bearer,
      summary: "Make a new share link of the cut (each call makes another); event cut.shared",
      description: "The link shows the cut's files as they are when it is opened, each playable and downloadable, and all of them as one ZIP.",
      requestBody: { required: false, ...json(ref('ShareRequest')) },
      responses: { '201': created(ref('ShareLink')), ...errors(400, 401, 404, 413, 415) },
    },
    delete: {
      tags: ['shares'],
      security: bearer,
      summary: "Revoke every link of the cut (a project ADMIN, or a member when every link is their own)",
      responses: { '200': ok(ref('RevokeSharesResult')), ...errors(401, 403, 404) },
    },
  },
  '/api/cuts/{id}/shares': { parameters: [idParam('id', 'Cut id')], get: shareList('cut') },
  '/api/files/{id}/shares': { parameters: [idParam('id', 'File id')], get: shareList('file') },
  '/api/shares/{id}': {
    parameters: [idParam('id', 'Share link id (from the lists)')],
    delete: {
      tags: ['shares'],
      security: bearer,
      summary: "Revoke one link: its creator, the uploader of the file it shares, or a project ADMIN",
      responses: { '200': ok(ref('Deleted')), ...errors(401, 403, 404) },
    },
  },
  '/api/share/{token}/files/{fileId}': {
    parameters: [tokenParam, idParam('fileId', 'A file of the shared cut')],
    get: {
      tags: ['shares'],
      summary: 'A file of a shared cut, no authentication (also HEAD): the bytes inline, or an attachment with ?download=1',
      description: 'Ranges and ETag as the download endpoint. A file of another cut, or a file link: 404. ' + ACCESS_COUNTING,
      parameters: [{ name: 'download', in: 'query', required: false, schema: { type: 'string', enum: ['1'] } }],
      responses: { ...sharedBytes, '404': problem('NOT_FOUND') },
    },
  },
  '/api/share/{token}/archive': {
    parameters: [tokenParam],
    get: {
      tags: ['shares'],
      summary: 'Every file of a shared cut as one ZIP, no authentication (also HEAD)',
      description: ARCHIVE_ENTRIES + ' A file link: 404. ' + ACCESS_COUNTING,
      responses: { '200': archiveBytes, '404': problem('NOT_FOUND') },
    },
  },
  '/api/files/upload': {
    post: {
      tags: ['files'],
      security: bearer,
      summary: 'Upload a file to a cut (streamed to disk; sha256 computed while streaming)',
      description:
        `Type from the extension, MIME type from the table, leading bytes verified. Limits: audio ${sizeInMiB(MAX_UPLOAD_BYTES.CUT)}, ZIP stems ${sizeInMiB(MAX_UPLOAD_BYTES.STEM)}, ` +
        `images ${sizeInMiB(MAX_UPLOAD_BYTES.IMAGE)}; 413 as soon as the limit is crossed. When cutId precedes the file part, access is checked before any ` +
        'byte is stored. A failed, refused or aborted upload leaves neither a file nor a row. 507 when the upload would ' +
        "leave less than MIN_FREE_DISK_MB free on the server's disk (INSUFFICIENT_STORAGE) or take the caller over " +
        'USER_QUOTA_MB (QUOTA_EXCEEDED): before reading when Content-Length says so, else as soon as it is crossed.',
      requestBody: {
        required: true,
        content: multipart('UploadForm'),
      },
      responses: {
        '201': created(ref('File')),
        ...errors(400, 401, 404, 413, 415, 507),
        '503': problem('UNAVAILABLE, with Retry-After: the database is unreachable, or the server is shutting down and cut the upload after its grace period (nothing stored)', RETRY_AFTER),
      },
    },
  },
  '/api/uploads': {
    options: {
      tags: ['uploads'],
      summary: 'Resumable uploads (tus 1.0.0): what this server supports; no authentication',
      responses: {
        '204': {
          description: 'No content',
          headers: {
            'Tus-Version': { schema: { type: 'string', const: '1.0.0' } },
            'Tus-Extension': { schema: { type: 'string', const: 'creation,creation-with-upload,termination,checksum,expiration' } },
            'Tus-Max-Size': { schema: { type: 'integer' }, description: `The largest type limit (${sizeInMiB(MAX_UPLOAD_BYTES.STEM)} unless MAX_STEM_BYTES lowers it)` },
            'Tus-Checksum-Algorithm': { schema: { type: 'string', const: 'sha1,sha256' } },
          },
        },
      },
    },
    post: {
      tags: ['uploads'],
      security: bearer,
      summary: 'Create a resumable upload (tus creation, creation-with-upload)',
      description:
        'The same upload as POST /api/files/upload, in pieces that survive a dropped connection, a killed client or a ' +
        'restarted server; any tus 1.0.0 client works. Every request of /api/uploads needs Tus-Resumable: 1.0.0 (else 412 ' +
        'VALIDATION_FAILED naming the header) and a Bearer token (a session token or a write personal access token). Upload-Length is ' +
        'required (deferred length: 400; 0: 400). Upload-Metadata (comma-separated "key base64value") carries cutId and ' +
        'filename (required; the extension decides the type) and name (optional display name). Checked before any byte: ' +
        'access to the cut (404), the extension (415 UNSUPPORTED_FILE_TYPE), the type\'s limit (413 FILE_TOO_LARGE), quota and ' +
        'free disk (507). At most 10 incomplete uploads per user: the 11th is 429 RATE_LIMITED. A body sent as ' +
        'application/offset+octet-stream is the first bytes (as a PATCH at offset 0), and the answer carries Upload-Offset.',
      parameters: [
        { name: 'Tus-Resumable', in: 'header', required: true, schema: { type: 'string', const: '1.0.0' } },
        { name: 'Upload-Length', in: 'header', required: true, schema: { type: 'integer', minimum: 1 } },
        { name: 'Upload-Metadata', in: 'header', required: true, schema: { type: 'string' }, description: 'cutId and filename required, name optional; values base64' },
      ],
      requestBody: { required: false, content: { 'application/offset+octet-stream': { schema: { type: 'string', format: 'binary' } } } },
      responses: {
        '201': {
          description: 'Created',
          headers: {
            Location: { schema: { type: 'string' }, description: '/api/uploads/<id>' },
            'Upload-Expires': { schema: { type: 'string' }, description: 'An HTTP date: 24 hours after the last bytes arrived' },
            'Upload-Offset': { schema: { type: 'integer' }, description: 'Bytes received (creation-with-upload)' },
          },
        },
        ...errors(400, 401, 404, 413, 415, 429, 507),
        '412': problem('VALIDATION_FAILED (field Tus-Resumable): Tus-Resumable is not 1.0.0 (the answer names Tus-Version)'),
      },
    },
  },
  '/api/uploads/{id}': {
    parameters: [idParam('id', 'The upload id, from the Location of its creation')],
    head: {
      tags: ['uploads'],
      security: bearer,
      summary: 'Where an upload stands: its offset, length and expiry; once complete, the file it became',
      description: 'Only its creator sees an upload: everyone else gets 404, as for an expired or terminated upload.',
      responses: {
        '200': {
          description: 'No body',
          headers: {
            'Upload-Offset': { schema: { type: 'integer' } },
            'Upload-Length': { schema: { type: 'integer' } },
            'Upload-Expires': { schema: { type: 'string' } },
            'Band-File-Id': { schema: uuid, description: 'Once complete: the id of the File' },
            'Cache-Control': { schema: { type: 'string', const: 'no-store' } },
          },
        },
        ...errors(401, 404),
        '412': problem('VALIDATION_FAILED (field Tus-Resumable): Tus-Resumable is not 1.0.0'),
      },
    },
    patch: {
      tags: ['uploads'],
      security: bearer,
      summary: 'Send bytes at the current offset (one chunk or the whole rest)',
      description:
        'Upload-Offset must equal the bytes received (else 409 OFFSET_MISMATCH). An optional Upload-Checksum ' +
        '("sha1 <base64>" or "sha256 <base64>") covers this request\'s bytes: a mismatch is 460 CHECKSUM_MISMATCH and they are ' +
        'discarded. Bytes that arrived before a dropped connection are kept (unless a checksum must cover them); HEAD says ' +
        'how many. An answered PATCH is durable (on disk before the 204). The leading bytes are checked as soon as they ' +
        'arrive: a mismatch is 415 and the upload is terminated. A second PATCH while one is in progress (on any instance): ' +
        '423 UPLOAD_LOCKED. The PATCH that reaches Upload-Length records the File exactly as POST /api/files/upload does ' +
        '(sha256, the file.uploaded event) before it answers, with Band-File-Id.',
      parameters: [
        { name: 'Tus-Resumable', in: 'header', required: true, schema: { type: 'string', const: '1.0.0' } },
        { name: 'Upload-Offset', in: 'header', required: true, schema: { type: 'integer', minimum: 0 } },
        { name: 'Upload-Checksum', in: 'header', required: false, schema: { type: 'string' } },
      ],
      requestBody: { required: true, content: { 'application/offset+octet-stream': { schema: { type: 'string', format: 'binary' } } } },
      responses: {
        '204': {
          description: 'Stored',
          headers: {
            'Upload-Offset': { schema: { type: 'integer' } },
            'Upload-Expires': { schema: { type: 'string' } },
            'Band-File-Id': { schema: uuid, description: 'On the PATCH that completes the upload' },
          },
        },
        ...errors(400, 401, 404, 413, 415, 507),
        '409': problem('OFFSET_MISMATCH: Upload-Offset is not the bytes received'),
        '412': problem('VALIDATION_FAILED (field Tus-Resumable): Tus-Resumable is not 1.0.0'),
        '423': problem('UPLOAD_LOCKED: another PATCH of this upload is in progress'),
        '460': problem('CHECKSUM_MISMATCH: the bytes do not match Upload-Checksum; they were discarded'),
        '503': problem(
          'UNAVAILABLE, with Retry-After: the database is unreachable, the server is shutting down (the bytes that arrived are kept), ' +
            'or 5 PATCHes are already receiving bytes on this instance (Retry-After: 1)',
          RETRY_AFTER,
        ),
      },
    },
    delete: {
      tags: ['uploads'],
      security: bearer,
      summary: 'Terminate an upload: its bytes are removed (a completed upload\'s File stays)',
      responses: {
        '204': { description: 'Terminated' },
        ...errors(401, 404),
        '412': problem('VALIDATION_FAILED (field Tus-Resumable): Tus-Resumable is not 1.0.0'),
        '423': problem('UPLOAD_LOCKED: a PATCH of this upload is in progress'),
      },
    },
  },
  '/api/files/storage': {
    get: {
      tags: ['storage'],
      security: bearer,
      summary: "The caller's uploads by type and quota; site ADMINs also get the site block",
      description:
        '`images` counts every image the caller uploaded: image files on cuts, project covers and vibe images (an image replaced or removed no longer counts). The three types add up to `totalSize` and `fileCount`.',
      responses: { '200': ok(ref('StorageStats')), ...errors(401) },
    },
  },
  '/api/files/{id}': {
    parameters: [idParam('id', 'File id')],
    get: { tags: ['files'], security: bearer, summary: 'A file record', responses: { '200': ok(ref('File')), ...errors(401, 404) } },
    delete: {
      tags: ['files'],
      security: bearer,
      summary: 'Delete the file (its uploader or a project ADMIN); bytes removed after commit',
      responses: { '200': ok(ref('Deleted')), ...errors(401, 403, 404) },
    },
  },
  '/api/files/{id}/peaks': {
    parameters: [idParam('id', 'File id')],
    get: {
      tags: ['files'],
      security: bearer,
      summary: "A CUT's waveform (waveform-data v2, 1000–2000 min/max pairs, as peaks.js and wavesurfer.js read it)",
      description:
        'Every CUT file and every STEM ZIP is analysed in the background after upload (File.analysis). 409 ANALYSIS_PENDING until the ' +
        'analysis ran; 404 for files that are not audio (STEM, IMAGE) or whose audio could not be decoded (analysis: failed).',
      responses: { '200': ok(ref('Waveform')), ...errors(401), '404': problem(COMMON_ERRORS['404']!), '409': problem('ANALYSIS_PENDING: not analysed yet; try again shortly') },
    },
  },
  '/api/files/{id}/download': {
    parameters: [idParam('id', 'File id')],
    get: {
      tags: ['files'],
      security: mediaAuth,
      summary: 'The bytes as an attachment (also HEAD); single Range, If-None-Match, If-Modified-Since',
      responses: { ...byteResponses('attachment; filename="…"; filename*=UTF-8\'\'…'), ...errors(401, 404) },
    },
  },
  '/api/files/{id}/share': {
    parameters: [idParam('id', 'File id')],
    post: {
      tags: ['shares'],
      security: bearer,
      summary: 'Make a new share link (each call makes another)',
      requestBody: {
        required: false,
        ...json(ref('ShareRequest')),
      },
      responses: { '201': created(ref('ShareLink')), ...errors(400, 401, 404, 413, 415) },
    },
    delete: {
      tags: ['shares'],
      security: bearer,
      summary: 'Revoke every link of the file (its uploader or a project ADMIN)',
      responses: { '200': ok(ref('RevokeSharesResult')), ...errors(401, 403, 404) },
    },
  },
  '/api/share/{token}': {
    parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
    get: {
      tags: ['shares'],
      summary: 'A shared file or cut, no authentication: JSON when Accept names application/json, else the bytes (also HEAD)',
      description:
        'JSON: SharedFile (kind "file") or SharedCut (kind "cut"). Otherwise a file link answers the bytes, inline or as an ' +
        'attachment with ?download=1, ranges and ETag as the download endpoint; a cut link answers its ZIP. Unknown, revoked, ' +
        'expired links and links of deleted files or cuts: 404, all alike. ' + ACCESS_COUNTING,
      parameters: [{ name: 'download', in: 'query', required: false, schema: { type: 'string', enum: ['1'] } }],
      responses: {
        ...sharedBytes,
        '200': {
          ...sharedBytes['200'],
          description: 'SharedItem as JSON when Accept names application/json, else the bytes (a cut link: its ZIP)',
          content: { ...json(ref('SharedItem')).content, ...sharedBytes['200'].content, ...archiveBytes.content },
        },
        '404': problem('NOT_FOUND'),
      },
    },
  },
  '/api/share/{token}/peaks': {
    parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
    get: {
      tags: ['shares'],
      summary: 'The waveform of a shared CUT, no authentication (as GET /api/files/{id}/peaks)',
      responses: {
        '200': ok(ref('Waveform')),
        '404': problem('NOT_FOUND: unknown, revoked or expired link; or no waveform (not audio, or analysis failed)'),
        '409': problem('ANALYSIS_PENDING: not analysed yet; try again shortly'),
      },
    },
  },
  '/api/share/{token}/files/{fileId}/peaks': {
    parameters: [
      { name: 'token', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'fileId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
    ],
    get: {
      tags: ['shares'],
      summary: 'The waveform of a CUT file of a cut link, no authentication (as GET /api/files/{id}/peaks)',
      responses: {
        '200': ok(ref('Waveform')),
        '404': problem('NOT_FOUND: unknown, revoked or expired link, a file not in its cut; or no waveform (not audio, or analysis failed)'),
        '409': problem('ANALYSIS_PENDING: not analysed yet; try again shortly'),
      },
    },
  },
  '/share/{token}': {
    parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
    get: {
      tags: ['shares'],
      summary: 'The HTML page for people: name, type, size, an audio player or the picture, a download button',
      description:
        "A cut link's page lists the cut's files, each with a player (audio) and a download, and a Download all button (the ZIP). " +
        "A file link's page of an analysed CUT, and each analysed take on a cut link's page, also shows its duration, format and loudness, and draws the waveform inline (SVG); clicking it seeks the player. " +
        ACCESS_COUNTING,
      responses: { '200': { description: 'HTML', content: { 'text/html': {} } }, '404': { description: 'A plain HTML 404 page', content: { 'text/html': {} } } },
    },
  },
  '/invite/{token}': {
    parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
    get: {
      tags: ['members'],
      summary: 'The HTML page of an invitation link: the project, who invited, the role, the expiry and how to accept',
      responses: { '200': { description: 'HTML', content: { 'text/html': {} } }, '404': { description: 'A plain HTML 404 page', content: { 'text/html': {} } } },
    },
  },
  '/uploads/files/{name}': {
    parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string', examples: ['<id>.mp3'] } }],
    get: { tags: ['media'], security: mediaAuth, summary: 'The bytes inline for members (also HEAD), for audio elements to play and seek', responses: { ...byteResponses('inline; …'), ...errors(401, 404) } },
  },
  '/uploads/images/{name}': {
    parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string', examples: ['<uuid>.png'] } }],
    get: {
      tags: ['media'],
      security: mediaAuth,
      summary: 'A project cover or vibe image, for members (also HEAD)',
      responses: { ...byteResponses('inline; filename="<uuid>.<ext>"'), ...errors(401, 404) },
    },
  },
  '/uploads/avatars/{name}': {
    parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string', examples: ['<uuid>.png'] } }],
    get: {
      tags: ['media'],
      security: mediaAuth,
      summary: "A user's avatar, for any signed-in user (also HEAD)",
      responses: { ...byteResponses('inline; filename="<uuid>.<ext>"'), ...errors(401, 404) },
    },
  },
  '/api/events': {
    get: {
      tags: ['events'],
      security: mediaAuth,
      summary: 'WebSocket (Upgrade: websocket): every event of the caller\'s projects',
      description:
        'First message {type: "hello", userId, projectIds}; then ProjectEvent messages, in commit order, for the projects the ' +
        'user belongs to at that moment (member.added for the user adds a project, member.removed and project.deleted drop it ' +
        'after delivering that event; creating a project is a member.added of its creator). Events missed while disconnected ' +
        'are not replayed: reload after each hello. An Origin other than PUBLIC_URL or one of CORS_ORIGINS is refused (403); ' +
        `requests without Origin (non-browser clients) are allowed. The server pings every ${setting('EVENTS_HEARTBEAT_SECONDS')} and ` +
        'drops a peer that misses a pong. Close codes: 4401 the session ended (logout, refresh-token reuse, end of its ' +
        'lifetime; a personal access token revoked or expired; do not reconnect); 1013 the client fell over 1 MiB behind; 1012 the server may have missed events ' +
        '(its LISTEN connection was re-established); 1001 the server is shutting down; 1011 internal error. Reconnect with ' +
        'backoff on every code but 4401. A malformed handshake (after authentication) is 400 VALIDATION_FAILED, field "handshake".',
      responses: { '101': { description: 'Switching protocols', ...json(ref('ProjectEvent')) }, ...errors(400, 401, 403) },
    },
  },
};

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'bandcollab API',
    version: SERVER_VERSION,
    description:
      'Projects hold vibes, vibes hold cuts, files hang on cuts. Errors are RFC 9457 problem details (application/problem+json). ' +
      'Ids are UUIDs; a path id that is not a UUID answers 404. Timestamps are ISO 8601 UTC with milliseconds; absent optional ' +
      'values are null. Create answers 201 with Location; update 200 with the whole record; delete 200 {id, deleted: true}. ' +
      'Every response carries X-Request-Id (a sane incoming one is echoed). JSON bodies: malformed 400 INVALID_JSON, over ' +
      '1 MiB 413 PAYLOAD_TOO_LARGE, another content type 415 UNSUPPORTED_MEDIA_TYPE. Any endpoint may answer 500 INTERNAL ' +
      '(no internals in the body; logged with the request id) or 503 UNAVAILABLE with Retry-After when the database is ' +
      'unreachable. HEAD is answered on GET routes only, and on a resumable upload (/api/uploads/{id}). ' +
      'An account whose password an admin reset (the reset-password server command) gets 403 PASSWORD_CHANGE_REQUIRED from ' +
      'every authenticated endpoint but POST /api/auth/password until it sets a new one. ' +
      'A personal access token (bcp_…, see POST /api/tokens) used beyond its scope gets 403 INSUFFICIENT_SCOPE on any ' +
      'endpoint: a read token on anything but GET and HEAD, any token on /api/auth/* (except GET /api/auth/me) and /api/tokens. ' +
      'Every response also carries X-Content-Type-Options: nosniff and Referrer-Policy: no-referrer; every JSON answer ' +
      '(records and problem details) Cache-Control: no-store; file bytes Cache-Control: private, no-cache with their validators. ' +
      `Connections: headers must arrive within ${SETTINGS.HEADERS_TIMEOUT_SECONDS.default} s; a request whose connection moves no byte for ${setting('IDLE_TIMEOUT_SECONDS')} ` +
      `is cut; idle keep-alive connections close after 5 s; at most ${setting('MAX_CONNECTIONS')} are open at once.`,
  },
  servers: [{ url: '/' }],
  components: {
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'An access token (JWT, 15 minutes), or a personal access token (bcp_…, see POST /api/tokens)',
      },
      accessCookie: { type: 'apiKey', in: 'cookie', name: 'access_token', description: 'Accepted on media GET/HEAD and the WebSocket upgrade' },
    },
    schemas,
  },
  paths,
} as const;
