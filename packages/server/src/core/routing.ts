import type { App } from '@tinyhttp/app';

/** A route as a feature registered it: its method and its path as declared (`/api/tokens/:id`). */
export interface DeclaredRoute {
  method: string;
  path: string;
}

/** The routes `app` has, in the order they were registered (which is the order they are tried in). */
export function declaredRoutes(app: App): DeclaredRoute[] {
  return app.middleware.flatMap((route) =>
    route.type === 'route' && route.method !== undefined && route.path !== undefined ? [{ method: route.method, path: route.path }] : [],
  );
}

/**
 * tinyhttp matches a route's path in any letter case and with or without a trailing slash (regexparam's
 * patterns are case-insensitive and end in an optional slash). Here every route matches only its path as
 * declared: any other spelling names no route and is 404, as on GitHub's API, so nothing decided for a route
 * can be had, or dodged, by spelling its path otherwise. The request listener (core/listener.ts) lets through
 * only canonical paths (isCanonicalPath) that a RouteTable built from the same patterns matches, so it and
 * tinyhttp always agree on the route. Called once every route is registered.
 */
export function routeExactly(app: App): void {
  for (const route of app.middleware) {
    if (route.type === 'route' && route.regex && route.path !== undefined) route.regex = { ...route.regex, pattern: exactPattern(route.path) };
  }
}

/**
 * The path `path` (without its query) names once spelt plainly: percent-escapes decoded (`%2F` then separates
 * segments), a backslash read as `/`, `;` parameters dropped, empty and `.` segments dropped, `..` segments resolved,
 * no trailing slash. Letter case is kept. What the request log shows of a path that is not canonical.
 */
export function normalisedPath(path: string): string {
  const segments: string[] = [];
  for (const segment of decoded(path).replaceAll('\\', '/').split('/')) {
    const bare = segment.split(';')[0]!;
    if (bare === '..') segments.pop();
    else if (bare !== '' && bare !== '.') segments.push(bare);
  }
  return `/${segments.join('/')}`;
}

/**
 * Whether a path is spelt as routes are declared, the only spelling any route answers (see routeExactly):
 * no percent-escape (no route's literal needs one, and ids, tokens and stored names are URL-safe), no backslash, no
 * `;`, no empty or dot segment, no trailing slash. Letter case is left to the route match, which is exact.
 */
export const isCanonicalPath = (path: string): boolean => !path.includes('%') && normalisedPath(path) === path;

/**
 * Which methods the declared routes answer on a canonical path, and the template of each (a metric's route
 * label): the one match the request listener and tinyhttp share.
 */
export class RouteTable {
  private readonly routes: Array<{ method: string; path: string; pattern: RegExp }>;

  constructor(routes: DeclaredRoute[]) {
    this.routes = routes.map(({ method, path }) => ({ method, path, pattern: exactPattern(path) }));
  }

  /** Method → the declared path (template) that answers it here. */
  routesAt(path: string): Map<string, string> {
    return new Map(this.routes.flatMap((route) => (route.pattern.test(path) ? [[route.method, route.path] as const] : [])));
  }
}

function decoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The pattern of a path made of literal segments and `:name` parameters (or the root), the only kinds our routes declare. */
function exactPattern(path: string): RegExp {
  if (path === '/') return /^\/$/;
  const segments = path
    .split('/')
    .slice(1)
    .map((segment) => {
      if (/^:\w+$/.test(segment)) return '([^/]+?)';
      if (!/^[\w.-]+$/.test(segment)) throw new Error(`Route ${path}: only literal segments and :parameters can be matched exactly`);
      return segment.replaceAll('.', '\\.');
    });
  return new RegExp(`^/${segments.join('/')}$`);
}
