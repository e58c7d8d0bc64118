// What a route declaration is (contract/routes/<feature>.ts hold one per endpoint). Types and plain functions only,
// no zod at run time: the SDK's main entry reads these helpers and must not load zod (its builds replace the route
// table, whose query schemas are zod, by the table's run-time fields: tsup.config.ts).
import type { z } from 'zod';
import type { ErrorCode } from './error-codes.js';
import type { RECORD_SCHEMAS } from './records.js';
import type { FORM_SCHEMAS, REQUEST_SCHEMAS } from './requests.js';

export type RouteMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/**
 * Who may call a route:
 * - `anonymous`: nobody needs credentials (health, public share links, invitation views);
 * - `sign-in`: no credentials needed, and a personal access token is refused (403 INSUFFICIENT_SCOPE): it cannot sign in;
 * - `session`: a signed-in session only; a personal access token is refused (403 INSUFFICIENT_SCOPE);
 * - `read`: a session or any personal access token;
 * - `write`: a session or a `write` personal access token (a `read` one: 403 INSUFFICIENT_SCOPE).
 */
/**
 * Who may call a route: `read`/`write` a session or a personal access token of that scope; `review` a session or
 * a token of the `review` scope (reviews: a person's judgement, not a CI job's).
 */
export type RouteAuth = 'anonymous' | 'sign-in' | 'session' | 'read' | 'write' | 'review';

export type RecordName = keyof typeof RECORD_SCHEMAS;
export type RequestName = keyof typeof REQUEST_SCHEMAS;
export type FormName = keyof typeof FORM_SCHEMAS;

/**
 * A path parameter: a string naming what a UUID id identifies (`'Token'`: 404 "Token not found" when it is not a
 * UUID; documented as "Token id"), or the same with its own description, or (`uuid: false`) a free text segment.
 */
export type PathParam = string | { noun: string; description: string } | { uuid: false; description?: string; examples?: readonly string[] };

/** Raw OpenAPI for what the declaration's fields do not say (byte bodies, tus headers); merged over the generated operation. */
export interface OpenApiExtras {
  parameters?: readonly Record<string, unknown>[];
  requestBody?: Record<string, unknown>;
  responses?: Record<string, unknown>;
  security?: readonly Record<string, readonly string[]>[];
}

/** Kinds of non-JSON answers, documented by the OpenAPI generator. */
export type Produces =
  | { bytes: string }
  | 'archive'
  | 'html';

export interface RouteDeclaration {
  method: RouteMethod;
  /** As the server routes it: `/api/tokens/:id`. */
  path: string;
  auth: RouteAuth;
  /** Also accepts the `access_token` cookie (media GETs, downloads, the events WebSocket), so `<audio>` can play. */
  cookie?: true;
  /** The one endpoint an account with a one-time password may call (403 PASSWORD_CHANGE_REQUIRED everywhere else). */
  passwordChange?: true;
  params?: Readonly<Record<string, PathParam>>;
  /**
   * The query string, as a zod object declared beside the feature's routes (every value arrives as text):
   * validated before the handler runs (400 VALIDATION_FAILED naming the parameter), documented as the
   * operation's query parameters, and the SDK's option type (`QueryOf`, its input type).
   */
  query?: z.ZodObject;
  /** A JSON body, by its contract name. */
  request?: RequestName;
  /** A multipart/form-data body, by its contract name (beside or instead of `request`). */
  form?: FormName;
  /** The body may be left out. */
  optionalBody?: true;
  /** The success answer's JSON body, by its record name; `Name[]` for a list. */
  response?: RecordName | `${RecordName}[]`;
  /** The success status. */
  status: number;
  /** Error codes beyond those the declaration implies (401 when authenticated, 404 for an id, 400/413/415 for a body). */
  errors?: readonly ErrorCode[];
  /** What an error status means on this route, where the common wording does not say it. */
  errorNotes?: Readonly<Record<number, string>>;
  /** Sets the auth cookies on success (register, login, refresh, the IdP exchange). */
  setsAuthCookies?: true;
  /** A non-JSON answer. */
  produces?: Produces;
  /**
   * The SDK method this declaration alone makes, as `resource.method` (sdk/src/route-methods.ts): the path's
   * parameters, then the query or the JSON body, then request options. Left out where the SDK's method does
   * more than send this one request and read its record.
   */
  sdk?: `${string}.${string}`;
  tag: string;
  summary: string;
  description?: string;
  openapi?: OpenApiExtras;
}

type RecordTypes = { [K in RecordName]: z.output<(typeof RECORD_SCHEMAS)[K]> };
type RequestTypes = { [K in RequestName]: z.input<(typeof REQUEST_SCHEMAS)[K]> };

/** The JSON body a route answers with. */
export type ResponseOf<R extends RouteDeclaration> = R['response'] extends `${infer N extends RecordName}[]`
  ? RecordTypes[N][]
  : R['response'] extends RecordName
    ? RecordTypes[R['response']]
    : undefined;

/** The query a route takes, as a client sends it (before the server's defaults). */
export type QueryOf<R extends RouteDeclaration> = R['query'] extends z.ZodObject ? z.input<R['query']> : undefined;

/** The JSON body a route takes. */
export type RequestOf<R extends RouteDeclaration> = R['request'] extends RequestName ? RequestTypes[R['request']] : undefined;

/** The names of a path's parameters: `/api/projects/:id/members/:userId` → `'id' | 'userId'`. */
export type PathParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

export type ParamsOf<R extends RouteDeclaration> = { [K in PathParamNames<R['path']>]: string };

/** The path of a route with its parameters filled in, each as one encoded segment. */
export function pathOf(route: RouteDeclaration, params: Readonly<Record<string, string>> = {}): string {
  return route.path.replace(/:([A-Za-z]+)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`${route.method} ${route.path} needs the parameter ${name}`);
    return encodeURIComponent(value);
  });
}

/** Declares a table of routes, keeping each entry's literal types (paths, names) for the SDK and the server. */
export const declareRoutes = <const T extends Record<string, RouteDeclaration>>(routes: T): T => routes;

/**
 * A route that creates something for a signed-in caller (an authenticated POST answering 201): it honours an
 * `Idempotency-Key` (API §17), so a client may send it again after a lost answer without creating twice.
 */
export const takesIdempotencyKey = (route: RouteDeclaration): boolean =>
  route.method === 'POST' && route.status === 201 && (route.auth === 'session' || route.auth === 'read' || route.auth === 'write');
