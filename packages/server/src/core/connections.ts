import { createServer, type RequestListener, type Server } from 'node:http';
import type { Config } from './config.js';
import type { Logger } from './logger.js';

/** Idle keep-alive connections close after this long (Node adds a second of grace to what it advertises). */
const KEEP_ALIVE_MS = 5_000;
/** How often Node looks for requests past the header timeout: the timeout then holds to within this. */
const HEADER_CHECK_INTERVAL_MS = 1_000;
/** At most one warning per this long while connections are being refused, so a flood cannot flood the log. */
const DROP_WARNING_INTERVAL_MS = 60_000;

/**
 * The HTTP server with its connection limits, so a slow or idle client never holds a connection that others
 * need:
 * - headers must arrive within `headersTimeoutSeconds`, however slowly they trickle (408, closed);
 * - a connection on which no byte moves for `idleTimeoutSeconds` while a request is in flight is closed: a body
 *   that stops sending (the upload code then removes its partial file), a reader that stops reading. Bytes
 *   that keep moving keep it open, so long uploads and slow downloads still work. An events WebSocket takes
 *   its socket out of this (the `ws` library turns the timeout off) and relies on its heartbeat;
 * - idle keep-alive connections close after 5 s;
 * - at most `maxConnections` are open at once (WebSockets included); more are closed as they arrive.
 * There is no whole-request timeout (`requestTimeout: 0`): a large upload on a slow line may take hours.
 */
export function createHttpServer(config: Config, log: Logger, listener: RequestListener): Server {
  const server = createServer(
    {
      requestTimeout: 0,
      headersTimeout: config.headersTimeoutSeconds * 1000,
      keepAliveTimeout: KEEP_ALIVE_MS,
      connectionsCheckingInterval: HEADER_CHECK_INTERVAL_MS,
    },
    listener,
  );
  server.timeout = config.idleTimeoutSeconds * 1000;
  server.maxConnections = config.maxConnections;
  let lastDropWarning = 0;
  server.on('drop', () => {
    if (Date.now() - lastDropWarning < DROP_WARNING_INTERVAL_MS) return;
    lastDropWarning = Date.now();
    log.warn('MAX_CONNECTIONS reached: new connections are closed until some end', { maxConnections: config.maxConnections });
  });
  return server;
}
