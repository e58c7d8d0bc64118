import { type ErrorCode, MAX_UPLOAD_BYTES, type RouteDeclaration, ROUTES, describeSize, STATUS_BY_CODE, takesIdempotencyKey } from '@bandcollab/sdk/contract';
import { z } from 'zod';
import { SETTINGS } from '../core/config.js';

// The OpenAPI `paths`, generated from the route declarations (@bandcollab/sdk/contract, routes.ts): what a
// declaration implies (401 for an authenticated route, 404 for an id, 400/413/415 for a body) is added here,
// so every route documents it alike.

type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const uuid: Schema = { type: 'string', format: 'uuid' };
const json = (schema: Schema) => ({ content: { 'application/json': { schema } } });

const problem = (text: string, headers?: Record<string, Schema>) => ({
  description: text,
  ...(headers ? { headers } : {}),
  content: { 'application/problem+json': { schema: ref('Problem') } },
});
const RETRY_AFTER = { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait' } };
/** Every 401 names the Bearer scheme. */
const unauthorized = (text: string) =>
  problem(text, {
    'WWW-Authenticate': {
      schema: { type: 'string' },
      description: 'Bearer; for TOKEN_EXPIRED: Bearer error="invalid_token", error_description="expired"',
    },
  });

/** What an error status means where the declaration adds no note of its own. */
const COMMON_ERRORS: Record<number, string> = {
  400: 'VALIDATION_FAILED, INVALID_JSON',
  401: 'UNAUTHENTICATED or TOKEN_EXPIRED',
  403: 'FORBIDDEN: a member without the role the action needs',
  404: 'NOT_FOUND: unknown, not a UUID, or not visible to the caller (non-members never get 403)',
  413: 'PAYLOAD_TOO_LARGE / FILE_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE / UNSUPPORTED_FILE_TYPE',
  429: 'RATE_LIMITED, with Retry-After',
  503: 'UNAVAILABLE: the database is unreachable, with Retry-After',
  507: 'INSUFFICIENT_STORAGE: the upload would leave less than MIN_FREE_DISK_MB free / QUOTA_EXCEEDED: it would take the uploader over USER_QUOTA_MB',
};
const SESSION_ONLY = 'INSUFFICIENT_SCOPE: a personal access token is refused here (a signed-in session only)';

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
const htmlPage = {
  '200': { description: 'HTML', content: { 'text/html': {} } },
  '404': { description: 'A plain HTML 404 page', content: { 'text/html': {} } },
};

const AUTHENTICATED = new Set(['session', 'read', 'write', 'review']);

/** API §17: every route that `takesIdempotencyKey` (core/routes.ts honours it for all of them). */
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', pattern: '^[!-~]{1,255}$' },
  description:
    'Makes a retry safe: for 24 hours, a repeat by the same user through the same credential (any of its sessions, or one personal access token) with the same key, method, path and body (for JSON the parsed body; for tus creation Upload-Length and Upload-Metadata; a multipart upload is not compared) creates nothing and gets the first answer again (a 4xx too; a 5xx is not kept), with Idempotent-Replayed: true; a multipart repeat is answered before its body is read. Another body, method or path, or a repeat while the first still runs (Retry-After: 1): 409 IDEMPOTENCY_CONFLICT. A malformed key: 400 VALIDATION_FAILED naming Idempotency-Key.',
};
const IDEMPOTENT_REPLAYED = { 'Idempotent-Replayed': { schema: { type: 'string', const: 'true' }, description: 'This is the first answer to the same Idempotency-Key, sent again' } };

/** The statuses a declaration implies, and the codes behind them. */
function impliedStatuses(route: RouteDeclaration): Set<number> {
  const statuses = new Set<number>();
  if (AUTHENTICATED.has(route.auth)) statuses.add(401);
  if (route.auth === 'session') statuses.add(403);
  if (route.request || route.form) for (const status of [400, 413, 415]) statuses.add(status);
  if (route.query) statuses.add(400);
  if (Object.values(route.params ?? {}).some(isUuidParam)) statuses.add(404);
  return statuses;
}

const isUuidParam = (param: NonNullable<RouteDeclaration['params']>[string]): boolean => typeof param === 'string' || 'noun' in param;

function errorResponses(route: RouteDeclaration): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const status of impliedStatuses(route)) byStatus.set(status, []);
  if (takesIdempotencyKey(route)) {
    byStatus.set(400, byStatus.get(400) ?? []);
    byStatus.set(409, [...(byStatus.get(409) ?? []), 'IDEMPOTENCY_CONFLICT']);
  }
  for (const code of route.errors ?? []) byStatus.set(STATUS_BY_CODE[code], [...(byStatus.get(STATUS_BY_CODE[code]) ?? []), code]);
  for (const status of Object.keys(route.errorNotes ?? {})) byStatus.set(Number(status), byStatus.get(Number(status)) ?? []);
  const responses: Record<string, unknown> = {};
  for (const [status, codes] of byStatus) {
    const note = route.errorNotes?.[status];
    const text = note ?? (status === 403 && route.auth === 'session' && codes.length === 0 ? SESSION_ONLY : (COMMON_ERRORS[status] ?? codes.join(', ')));
    responses[String(status)] = status === 401 ? unauthorized(text) : problem(text, status === 429 || status === 503 ? RETRY_AFTER : undefined);
  }
  return responses;
}

function successResponses(route: RouteDeclaration): Record<string, unknown> {
  const produces = route.produces;
  if (produces === 'archive') return { '200': archiveBytes };
  if (produces === 'html') return htmlPage;
  if (produces !== undefined) return byteResponses(produces.bytes);
  if (!route.response) return {};
  const schema = route.response.endsWith('[]') ? { type: 'array', items: ref(route.response.slice(0, -2)) } : ref(route.response);
  const location = route.status === 201 ? { Location: { schema: { type: 'string' }, description: 'Path of the created record' } } : undefined;
  const headers = { ...location, ...(route.setsAuthCookies ? AUTH_COOKIES : undefined), ...(takesIdempotencyKey(route) ? IDEMPOTENT_REPLAYED : undefined) };
  return {
    [String(route.status)]: {
      description: route.status === 201 ? 'Created' : 'OK',
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...json(schema),
    },
  };
}

function operation(route: RouteDeclaration): Record<string, unknown> {
  const extras = route.openapi ?? {};
  const security = AUTHENTICATED.has(route.auth) ? [{ bearer: [] }, ...(route.cookie ? [{ accessCookie: [] }] : [])] : undefined;
  const content = {
    ...(route.request ? json(ref(route.request)).content : {}),
    ...(route.form ? { 'multipart/form-data': { schema: ref(route.form) } } : {}),
  };
  const requestBody = Object.keys(content).length > 0 ? { required: !route.optionalBody, content } : extras.requestBody;
  const parameters = [...queryParameters(route), ...(takesIdempotencyKey(route) ? [IDEMPOTENCY_KEY] : []), ...(extras.parameters ?? [])];
  return {
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...((extras.security ?? security) ? { security: extras.security ?? security } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: { ...successResponses(route), ...errorResponses(route), ...extras.responses },
  };
}

/** The declared query (the route's zod object) as query parameters: one a property, as a client may send it. */
function queryParameters(route: RouteDeclaration): Record<string, unknown>[] {
  if (route.query === undefined) return [];
  const generated = z.toJSONSchema(route.query, { target: 'draft-2020-12', io: 'input' }) as { properties?: Record<string, Schema>; required?: string[] };
  return Object.entries(generated.properties ?? {}).map(([name, { description, ...schema }]) => ({
    name,
    in: 'query',
    required: generated.required?.includes(name) ?? false,
    ...(typeof description === 'string' ? { description } : {}),
    schema,
  }));
}

function pathParameters(route: RouteDeclaration): Record<string, unknown>[] {
  return Object.entries(route.params ?? {}).map(([name, param]) => {
    if (typeof param === 'string') return { name, in: 'path', required: true, description: `${param} id`, schema: uuid };
    if ('noun' in param) return { name, in: 'path', required: true, description: param.description, schema: uuid };
    const schema = param.examples ? { type: 'string', examples: param.examples } : { type: 'string' };
    return { name, in: 'path', required: true, ...(param.description ? { description: param.description } : {}), schema };
  });
}

/** `/api/tokens/:id` → `/api/tokens/{id}`. */
export const openApiPath = (path: string): string => path.replace(/:([A-Za-z]+)/g, '{$1}');

/**
 * The declaration's prose with each fact stated from its one table: `{LOGIN_MAX_FAILURES}` becomes
 * `LOGIN_MAX_FAILURES (10)` (the setting's default), `{limit:STEM}` the type's upload limit (`500 MiB`).
 */
function withFacts<T>(value: T): T {
  const settings: Partial<Record<string, { default?: unknown }>> = SETTINGS as Partial<Record<string, object>>;
  if (typeof value === 'string') {
    return value
      .replace(/\{([A-Z][A-Z_]+)\}/g, (written, name: string) => {
        const value = settings[name]?.default;
        return value === undefined ? written : `${name} (${String(value)})`;
      })
      .replace(/\{limit:(CUT|STEM|IMAGE|SESSION)\}/g, (_written, type: keyof typeof MAX_UPLOAD_BYTES) => describeSize(MAX_UPLOAD_BYTES[type])) as T;
  }
  if (Array.isArray(value)) return value.map(withFacts) as T;
  // Plain data only: a declaration's query is a zod schema (its descriptions name no setting), kept as it is.
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withFacts(item)])) as T;
  return value;
}

/** Every declared route as OpenAPI path items, in declaration order. */
export function generatedPaths(declared: readonly RouteDeclaration[] = Object.values(ROUTES)): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of declared.map(withFacts)) {
    const path = openApiPath(route.path);
    const parameters = pathParameters(route);
    paths[path] ??= parameters.length > 0 ? { parameters } : {};
    paths[path][route.method.toLowerCase()] = operation(route);
  }
  return paths;
}
