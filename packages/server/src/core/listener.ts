import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { DomainError } from './errors.js';
import { requestId, sendProblem, setCommonHeaders } from './http.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { UrlRedactor } from './redact.js';
import { isCanonicalPath, normalisedPath, type RouteTable } from './routing.js';

/** Answers a browser's preflight (OPTIONS) itself and adds the CORS headers to every other answer before calling `next`. */
export type CorsHandler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

export interface ListenerParts {
  log: Logger;
  urls: UrlRedactor;
  routes: RouteTable;
  /** Only with CORS_ORIGINS set. */
  cors?: CorsHandler;
  /** Only with GET /metrics on (METRICS_TOKEN or METRICS_LOOPBACK): off, requests are not measured. */
  metrics?: Metrics;
  /** The framework, which runs the route's handler: reached only on a path and method a declared route answers. */
  dispatch: RequestListener;
}

/**
 * The HTTP server's request listener, before the framework routes: so nothing a request can spell skips it.
 * It gives every response its request id and common headers, logs every request (its path normalised, secrets
 * redacted), and decides from the path as sent, once, whether any route answers: a path that is not canonical
 * (isCanonicalPath: case aside, `//`, `%2F`, dot segments, a trailing slash, `;`) or that no route declares is
 * 404 for every method. Then CORS, and the method: a method runs only a route declared for it, HEAD the
 * path's HEAD route or else its GET route (which Routes.on runs for it, Node dropping the body); OPTIONS is a
 * CORS preflight or the path's OPTIONS route.
 */
export function requestListener({ log, urls, routes, cors, metrics, dispatch }: ListenerParts): RequestListener {
  return (req, res) => {
    setCommonHeaders(req, res);
    const method = req.method ?? '';
    const url = req.url ?? '';
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    let idled = false;
    // Request lines are info: with info logging off, a request gathers no fields and adds no listeners for them.
    if (log.enabled('info')) logRequest(log, req, res, urls.redact(method, normalisedPath(path)), () => idled);
    // IDLE_TIMEOUT_SECONDS without a byte moving (see core/connections.ts); handled here, so it is logged.
    res.once('timeout', () => {
      idled = true;
      req.socket.destroy();
    });
    const methods = isCanonicalPath(path) ? routes.routesAt(path) : new Map<string, string>();
    // The template that answers (HEAD: the path's GET route's): metrics label by it, never the path, so 10,000
    // file ids are one series; '' for none.
    const route = methods.get(method) ?? (method === 'HEAD' ? methods.get('GET') : undefined);
    metrics?.track(req, res, route ?? '');
    if (methods.size === 0 || (route === undefined && !(method === 'OPTIONS' && cors))) {
      sendProblem(req, res, new DomainError('NOT_FOUND', `No route for ${method} ${path}`));
      return;
    }
    if (cors) cors(req, res, () => dispatch(req, res));
    else dispatch(req, res);
  };
}

/** Logs the request when its answer is complete, or that it was not (closed by the client, or cut for idling). */
function logRequest(log: Logger, req: IncomingMessage, res: ServerResponse, path: string, idled: () => boolean): void {
  const started = process.hrtime.bigint();
  const method = req.method;
  const logged = () => ({ method, path, durationMs: Number(process.hrtime.bigint() - started) / 1e6, reqId: requestId(req) });
  res.once('finish', () => log.info('request', { ...logged(), status: res.statusCode }));
  res.once('close', () => {
    if (!res.writableFinished) log.info(idled() ? 'connection idle too long: closed' : 'client went away', logged());
  });
}
