import { FORM_SCHEMAS, RECORD_SCHEMAS, REQUEST_SCHEMAS } from '@bandcollab/sdk/contract';
import { z } from 'zod';
import { SETTINGS } from '../core/config.js';
import { SERVER_VERSION } from '../version.js';
import { generatedPaths } from './openapi-paths.js';

// The OpenAPI 3.1 document, served at GET /api/openapi.json. Its schemas (records and request bodies) are
// generated from the contract's zod schemas and its paths from the contract's route declarations
// (@bandcollab/sdk/contract, routes.ts); only the overview below is written here.

type Schema = Record<string, unknown>;

/** Named schemas as `components.schemas` entries, generated from the contract; references between them become `$ref`s. */
function generatedSchemas(named: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, Schema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const generated = z.toJSONSchema(registry, { target: 'draft-2020-12', io, uri: (id) => `#/components/schemas/${id}` });
  // Each comes out as a standalone JSON Schema document; inside components.schemas it is a plain schema.
  return Object.fromEntries(Object.entries(generated.schemas).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema]));
}

/**
 * The document, made at its first use rather than at import: generating it (with the reference made from it) was
 * about half a second of CPU in every server process, admin commands included, that never serves it.
 */
export function openApiDocument() {
  return (document ??= makeDocument());
}
let document: ReturnType<typeof makeDocument> | undefined;

const makeDocument = () => ({
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
      'unreachable. HEAD is answered on GET routes only, and on a resumable upload (/api/uploads/{id}). Paths match exactly as ' +
      'documented: another letter case, a repeated slash, a trailing slash, a dot segment, a ; parameter or any percent-escape ' +
      '(%2F, a percent-encoded letter) is 404 NOT_FOUND for every method. ' +
      'An account whose password an admin reset (the reset-password server command) gets 403 PASSWORD_CHANGE_REQUIRED from ' +
      'every authenticated endpoint but POST /api/auth/password until it sets a new one. ' +
      'A personal access token (bcp_…, see POST /api/tokens) used beyond its scope gets 403 INSUFFICIENT_SCOPE on any ' +
      'endpoint: a read token on anything but GET and HEAD, any token on /api/auth/* (except GET /api/auth/me) and /api/tokens. ' +
      'Every response also carries X-Content-Type-Options: nosniff and Referrer-Policy: no-referrer; every JSON answer ' +
      '(records and problem details) Cache-Control: no-store; file bytes Cache-Control: private, no-cache with their validators. ' +
      `Connections: headers must arrive within ${SETTINGS.HEADERS_TIMEOUT_SECONDS.default} s; a request whose connection moves no byte for ` +
      `IDLE_TIMEOUT_SECONDS (${SETTINGS.IDLE_TIMEOUT_SECONDS.default}) is cut; a new connection that sends no byte within 10 s is closed; idle ` +
      `keep-alive connections close after 5 s; at most MAX_CONNECTIONS (${SETTINGS.MAX_CONNECTIONS.default}) are open at once, and at most ` +
      'MAX_CONNECTIONS_PER_ADDRESS (the smaller of 200 and a tenth of MAX_CONNECTIONS) from one client address (not behind TRUST_PROXY).',
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
      accessCookie: { type: 'apiKey', in: 'cookie', name: 'access_token', description: 'Accepted on media GET/HEAD and the WebSocket upgrade, and on every route from the server’s own page (Sec-Fetch-Site: same-origin) or a page whose Origin is PUBLIC_URL or in CORS_ORIGINS (cookie mode, §17)' },
    },
    // Records as the server sends them; request bodies and forms as a client may send them (before trimming and defaults).
    schemas: {
      ...generatedSchemas(RECORD_SCHEMAS, 'output'),
      ...generatedSchemas({ ...REQUEST_SCHEMAS, ...FORM_SCHEMAS }, 'input'),
    } as Record<string, Schema>,
  },
  paths: generatedPaths(),
} as const);
