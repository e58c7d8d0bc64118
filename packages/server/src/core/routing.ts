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
 * can be had, or dodged, by spelling its path otherwise. Literal segments are compared as sent, so a
 * percent-encoded letter (`/api/%74okens`) does not match either; a parameter still takes any segment, which
 * tinyhttp percent-decodes as before. Called once every route is registered.
 */
export function routeExactly(app: App): void {
  for (const route of app.middleware) {
    if (route.type === 'route' && route.regex && route.path !== undefined) route.regex = { ...route.regex, pattern: exactPattern(route.path) };
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
