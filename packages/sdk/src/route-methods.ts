// SDK methods made from route declarations alone. A declaration that names its method (`sdk: 'trash.restore'`)
// needs no hand-written code: its resource class extends `routeMethods('trash')`, which adds `restore` to it,
// typed from the declaration. The method takes the path's parameters in the path's order, then the query (when
// the route declares one) or the JSON body (when it takes one), then request options; it answers the declared
// record. Routes whose method does more (bytes, uploads, several calls, a choice between routes) leave `sdk`
// out and are called by hand with `transport.call(ROUTES.x, …)`.
import type { BandPromise } from './band-promise.js';
import type { QueryOf, RequestOf, ResponseOf, RouteDeclaration } from './contract/route-types.js';
import { ROUTES } from './contract/routes.js';
import type { Query, RequestOptions, Transport } from './transport.js';

type Routes = typeof ROUTES;

/** A string per path parameter, in the path's order: `/api/trash/:kind/:id` → `[kind: string, id: string]`. */
type PathArgs<P extends string> = P extends `${string}:${string}/${infer Rest}` ? [string, ...PathArgs<`/${Rest}`>] : P extends `${string}:${string}` ? [string] : [];

/** What follows the path's parameters: the query (optional), or the JSON body (optional when the route says so). */
type InputArgs<R extends RouteDeclaration> = R['query'] extends object
  ? [query?: QueryOf<R>]
  : R['request'] extends string
    ? R['optionalBody'] extends true
      ? [body?: RequestOf<R>]
      : [body: RequestOf<R>]
    : [];

/** The method a declaration makes. */
export type RouteMethod<R extends RouteDeclaration> = (...args: [...PathArgs<R['path']>, ...InputArgs<R>, options?: RequestOptions]) => BandPromise<ResponseOf<R>>;

/** The methods the declarations of `Resource` make, by name. */
export type RouteMethodsOf<Resource extends string> = {
  [K in keyof Routes as Routes[K] extends { sdk: `${Resource}.${infer Method}` } ? Method : never]: Routes[K] extends RouteDeclaration ? RouteMethod<Routes[K]> : never;
};

/** A resource over the client's transport, which its hand-written methods call. */
export class TransportResource {
  constructor(protected readonly transport: Transport) {}
}

/** The base class of a resource: the methods its declarations make, over the client's transport. */
export function routeMethods<Resource extends string>(resource: Resource): new (transport: Transport) => TransportResource & RouteMethodsOf<Resource> {
  class RouteMethods extends TransportResource {}
  for (const route of Object.values(ROUTES) as RouteDeclaration[]) {
    if (!route.sdk?.startsWith(`${resource}.`)) continue;
    const names = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((match) => match[1]!);
    const takes = route.query ? 'query' : route.request ? 'json' : null;
    Object.defineProperty(RouteMethods.prototype, route.sdk.slice(resource.length + 1), {
      value(this: { transport: Transport }, ...args: unknown[]) {
        const params = Object.fromEntries(names.map((name, i) => [name, args[i] as string]));
        const input = takes === null ? undefined : args[names.length];
        const options = args[names.length + (takes === null ? 0 : 1)] as RequestOptions | undefined;
        return this.transport.call(route, { params, ...(takes === 'query' ? { query: input as Query } : takes === 'json' ? { json: input } : {}) } as never, options);
      },
    });
  }
  return RouteMethods as unknown as new (transport: Transport) => TransportResource & RouteMethodsOf<Resource>;
}
