import { isUuid } from '@bandcollab/sdk/contract';
import type { DeclaredRoute } from './routing.js';

export const REDACTED = '[redacted]';

/**
 * A run of URL-safe characters as long as a secret (share and invitation tokens are 43), unless it is a UUID:
 * redacted wherever it stands in a path, so a token no route fits (a misspelt path, a token pasted in the
 * wrong place) stays out of the log as well.
 */
const TOKEN_SHAPED = /[\w-]{32,}/g;

/** The parameter name a route gives a path segment that is a bearer secret: share and invitation links. */
const SECRET_PARAMETER = ':token';

interface RouteShape {
  method: string;
  /** Lower-case literal segments, and parameters as declared (`:id`); no empty segments. */
  segments: string[];
}

/**
 * Makes request URLs fit for the log, which never holds a secret. A path segment is one where the route the
 * path names declares `:token` (share and invitation links). The path is fitted to the routes ignoring
 * letter case, percent-encoding and repeated or trailing slashes, so a misspelt path, which routing answers
 * with 404, is redacted as the declared one is. A route of the request's method that fits the whole path
 * decides (`POST /api/invitations/accept` names an action, `GET /api/invitations/<token>` a secret); failing
 * one, a path whose start fits a route with a `:token` loses that segment, whatever follows or the method.
 * Then any token-shaped run left anywhere in the path goes too (TOKEN_SHAPED).
 * Every query value (one-time codes, OAuth state, redirect targets) is replaced too; the parameter names
 * stay, so a line still says which flow it was. Every logged path or URL goes through here.
 */
export class UrlRedactor {
  private readonly routes: RouteShape[];
  private readonly secretRoutes: RouteShape[];

  constructor(routes: DeclaredRoute[]) {
    this.routes = routes.map(({ method, path }) => ({
      method,
      segments: path
        .split('/')
        .filter(Boolean)
        .map((segment) => (segment.startsWith(':') ? segment : segment.toLowerCase())),
    }));
    // Only the part up to the secret matters: what follows it may be anything, or missing.
    this.secretRoutes = this.routes.flatMap(({ method, segments }) => {
      const secret = segments.indexOf(SECRET_PARAMETER);
      return secret === -1 ? [] : [{ method, segments: segments.slice(0, secret + 1) }];
    });
  }

  redact(method: string, url: string): string {
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    const redactedPath = this.redactPath(method, path);
    if (queryStart === -1) return redactedPath;
    const names = url
      .slice(queryStart + 1)
      .split('&')
      .filter(Boolean)
      .map((pair) => {
        const equals = pair.indexOf('=');
        // A bare `?<something>` might be a secret pasted as the query: nothing of it stays.
        return equals === -1 ? REDACTED : `${pair.slice(0, equals)}=${REDACTED}`;
      });
    return `${redactedPath}?${names.join('&')}`;
  }

  private redactPath(method: string, path: string): string {
    const raw = path.split('/');
    // Where each non-empty segment is in `raw`, and how it compares: decoded where it can be, lower case.
    const at = raw.flatMap((segment, index) => (segment === '' ? [] : [index]));
    const compared = at.map((index) => comparable(raw[index]!));
    const fits = (route: RouteShape, wholePath: boolean) =>
      (wholePath ? route.segments.length === compared.length : route.segments.length <= compared.length) &&
      route.segments.every((segment, i) => segment.startsWith(':') || segment === compared[i]);

    const named = this.routes.find((route) => route.method === method && fits(route, true));
    const secretAt = named
      ? named.segments.flatMap((segment, i) => (segment === SECRET_PARAMETER ? [i] : []))
      : this.secretRoutes.filter((route) => fits(route, false)).map((route) => route.segments.length - 1);
    for (const i of secretAt) raw[at[i]!] = REDACTED;
    return raw.join('/').replace(TOKEN_SHAPED, (run) => (isUuid(run) ? run : REDACTED));
  }
}

function comparable(segment: string): string {
  try {
    return decodeURIComponent(segment).toLowerCase();
  } catch {
    return segment.toLowerCase();
  }
}

/** Header names whose values are credentials: if a headers object is ever logged, these never are. */
// sec-websocket-protocol carries a browser's access token to the events stream (bandcollab.bearer.*, API §17).
export const SECRET_HEADERS: ReadonlySet<string> = new Set(['authorization', 'cookie', 'set-cookie', 'proxy-authorization', 'sec-websocket-protocol']);
