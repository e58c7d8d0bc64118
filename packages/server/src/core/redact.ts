/**
 * Paths whose next segment is a bearer secret: share links, and invitation links (whose `accept` is an
 * action, not a token). Repeated slashes are allowed for, so an odd spelling cannot slip a token past.
 */
const TOKEN_IN_PATH = /^(\/+(?:api\/+)?share\/+|\/+invite\/+|\/+api\/+invitations\/+(?!accept(?:[/?#]|$)))[^/?#]+/;

export const REDACTED = '[redacted]';

/**
 * A request URL fit for the log, which never holds a secret: the token of a share or invitation
 * path and the value of every query parameter (one-time codes, OAuth state, redirect targets) are replaced;
 * the parameter names stay, so a line still says which flow it was. Every logged path or URL goes through here.
 */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  const redactedPath = path.replace(TOKEN_IN_PATH, `$1${REDACTED}`);
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

/** Header names whose values are credentials: if a headers object is ever logged, these never are. */
export const SECRET_HEADERS: ReadonlySet<string> = new Set(['authorization', 'cookie', 'set-cookie', 'proxy-authorization']);
