import type { App, Request, Response } from '@tinyhttp/app';
import {
  type ParamsOf,
  REQUEST_SCHEMAS,
  type RequestName,
  type RequestOf,
  type ResponseOf,
  type RouteDeclaration,
  type RouteMethod,
  takesIdempotencyKey,
} from '@bandcollab/sdk/contract';
import type { z } from 'zod';
import type { AuthGuard, Principal } from './auth-guard.js';
import { contentType, hasBody, idParam, isMultipart, readJson, sendJson, validate } from './http.js';
import { DomainError } from './errors.js';
import { type Idempotency, idempotencyKeyOf } from './idempotency.js';

/**
 * What a handler gets: the request, its checked path parameters and query, its caller (for authenticated
 * routes) and its body on demand. The query is the declaration's (`query`), validated: a handler never reads
 * `req.query` itself (a conventions test holds it to that).
 */
export interface RouteContext<R extends RouteDeclaration> {
  req: Request;
  res: Response;
  params: ParamsOf<R>;
  query: R['query'] extends z.ZodObject ? z.output<R['query']> : undefined;
  principal: R['auth'] extends 'session' | 'read' | 'write' | 'review' ? Principal : undefined;
  /** Reads and validates the JSON body (≤ 1 MiB). Called by the handler, so access can be checked before the body is read. */
  body(): Promise<R['request'] extends RequestName ? z.output<(typeof REQUEST_SCHEMAS)[R['request']]> : never>;
}

/** The answer of a 201: the created record and the path of it. */
export interface Created<T> {
  location: string;
  body: T;
}

/**
 * A handler answers a route with a JSON `response` by returning the body (`Created` for a 201), sent with the
 * declared status; a route without one (bytes, pages, tus) writes its own answer.
 */
export type RouteHandler<R extends RouteDeclaration> = (
  context: RouteContext<R>,
) => Promise<R['response'] extends string ? (R['status'] extends 201 ? Created<ResponseOf<R>> : ResponseOf<R>) : void>;

export type { RequestOf };

const AUTHENTICATED = new Set(['session', 'read', 'write', 'review']);

export interface RouteOptions {
  /**
   * Runs before authentication (after a personal access token is refused where the declaration says so): what
   * every answer of the route carries, even a 401 (tus's `Tus-Resumable`), or a feature that is switched off
   * (the identity provider) and so answers everyone alike.
   */
  before?: (req: Request, res: Response) => void;
}

/**
 * Registers routes from their declarations (contract/routes.ts) and performs the authentication a declaration
 * names, so who may call a route is decided by its declaration, never by its path. Every route that creates
 * for a signed-in caller (`takesIdempotencyKey`: an authenticated POST answering 201) honours an
 * `Idempotency-Key` here, with no code of its own (API §17, core/idempotency.ts).
 */
export class Routes {
  /** The declarations registered so far: each once (tinyhttp would never reach a second registration). */
  private readonly registered = new Set<RouteDeclaration>();

  constructor(
    /** Private: a feature registers its routes here, from their declarations, never on the app itself. */
    private readonly app: App,
    private readonly guard: AuthGuard,
    private readonly idempotency: Idempotency,
  ) {}

  on<const R extends RouteDeclaration>(route: R, handler: RouteHandler<R>, { before }: RouteOptions = {}): void {
    if (this.registered.has(route)) throw new Error(`${route.method} ${route.path} is registered twice`);
    this.registered.add(route);
    const guard = this.guard;
    const idempotency = takesIdempotencyKey(route) ? this.idempotency : undefined;
    const nouns = uuidNouns(route);
    const schema = route.request === undefined ? undefined : REQUEST_SCHEMAS[route.request];
        const method = route.method.toLowerCase() as Lowercase<RouteMethod>;
    const takesNoBody = schema === undefined && route.form === undefined && route.openapi?.requestBody === undefined;
    this.app[method](route.path, async (req: Request, res: Response, next?: () => void) => {
      // tinyhttp offers a HEAD to every route of its path, in registration order: it runs the path's HEAD or GET route only.
      if (req.method !== route.method && !(req.method === 'HEAD' && route.method === 'GET')) return next?.();
      // A text/plain body is what a cross-site form sends without a preflight: a route taking no body takes
      // JSON (an empty object, as some clients send) or nothing.
      if (takesNoBody && hasBody(req) && contentType(req) !== 'application/json') {
        throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'This endpoint takes no body, or an application/json one');
      }
      if (route.auth === 'session' || route.auth === 'sign-in') guard.refusePersonalAccessToken(req);
      before?.(req, res);
      const principal = AUTHENTICATED.has(route.auth)
        ? await guard.authenticate(req, { allowCookie: route.cookie === true, passwordChange: route.passwordChange === true, scope: route.auth === 'write' || route.auth === 'review' ? route.auth : 'read' })
        : undefined;
      const params: Record<string, string> = {};
      for (const name of Object.keys(route.params ?? {})) params[name] = nouns[name] === undefined ? (req.params[name] ?? '') : idParam(req, name, nouns[name]);
      // After authentication (a 401 comes first), before the handler: 400 VALIDATION_FAILED naming the parameter.
      const query = route.query === undefined ? undefined : validate(route.query, req.query);
      const respond = async () => {
        const body = async () => {
          if (schema === undefined) throw new TypeError(`${route.method} ${route.path} declares no JSON body`);
          // Read once per request (readJson): a keyed request's body was read already, below.
          return validate(schema, await readJson(req, res));
        };
        const answer = await handler({ req, res, params, query, principal, body } as RouteContext<R>);
        if (route.response === undefined) return;
        if (route.status === 201) {
          const { location, body: created } = answer as Created<unknown>;
          sendJson(res, 201, created, { Location: location });
        } else sendJson(res, route.status, answer);
      };
      const key = idempotency === undefined ? undefined : idempotencyKeyOf(req);
      if (key === undefined) return respond();
      // A keyed request's JSON body is part of what makes a repeat the same request: read before the handler.
      const json = schema !== undefined && !isMultipart(req) ? await readJson(req, res) : undefined;
      await idempotency!.once({ req, res, userId: principal!.userId, tokenId: principal!.token?.tokenId ?? null, key, json }, respond);
    });
  }
}

/** The noun a 404 names for each UUID parameter ("Token not found"). */
function uuidNouns(route: RouteDeclaration): Record<string, string> {
  const nouns: Record<string, string> = {};
  for (const [name, param] of Object.entries(route.params ?? {})) {
    if (typeof param === 'string') nouns[name] = param;
    else if ('noun' in param) nouns[name] = param.noun;
  }
  return nouns;
}
