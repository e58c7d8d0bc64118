import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from './config.js';
import type { Logger } from './logger.js';

/** Idle keep-alive connections close after this long (Node adds a second of grace to what it advertises). */
const KEEP_ALIVE_MS = 5_000;
/** How often Node looks for requests past the header timeout: the timeout then holds to within this. */
const HEADER_CHECK_INTERVAL_MS = 1_000;
/** At most one warning per this long while connections are being refused, so a flood cannot flood the log. */
const DROP_WARNING_INTERVAL_MS = 60_000;
/**
 * A new connection that sends no byte for this long is closed unanswered: an idle connection held open costs a
 * place under MAX_CONNECTIONS and nothing else, so it gets far less time than a request whose headers trickle
 * in. Browsers that open a connection ahead of need use it within a few seconds or close it themselves.
 */
const FIRST_BYTE_TIMEOUT_MS = 10_000;
/**
 * After an answer sent before its request's body was read (a 413, 415, 401, 507…), up to this many more bytes of
 * the body are read and dropped; past that the connection is closed.
 */
const DRAINED_AFTER_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * The HTTP server with its connection limits, so a slow or idle client never holds a connection that others
 * need:
 * - headers must arrive within `headersTimeoutSeconds`, however slowly they trickle (408, closed);
 * - a connection on which no byte moves for `idleTimeoutSeconds` while a request is in flight is closed: a body
 *   that stops sending (the upload code then removes its partial file), a reader that stops reading. Bytes
 *   that keep moving keep it open, so long uploads and slow downloads still work. An events WebSocket takes
 *   its socket out of this (the `ws` library turns the timeout off) and relies on its heartbeat;
 * - a new connection that sends no byte within 10 s is closed unanswered;
 * - idle keep-alive connections close after 5 s;
 * - at most `maxConnections` are open at once (WebSockets included), and at most `maxConnectionsPerAddress`
 *   from one client address, counted as a connection arrives, before any byte of it is read, so one address
 *   cannot take every place (not behind a trusted proxy: every connection then comes from the proxy, which must
 *   hold its clients to account); more are closed as they arrive.
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
    (req, res) => {
      drainAfterAnswer(req, res);
      listener(req, res);
    },
  );
  server.timeout = config.idleTimeoutSeconds * 1000;
  server.maxConnections = config.maxConnections;
  const dropWarning = throttled(() =>
    log.warn('MAX_CONNECTIONS reached: new connections are closed until some end', { maxConnections: config.maxConnections }),
  );
  server.on('drop', dropWarning);
  if (!config.trustProxy) capPerAddress(server, log, config.maxConnectionsPerAddress);
  server.on('connection', (socket: Socket) => {
    if (socket.destroyed) return;
    const firstByte = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, FIRST_BYTE_TIMEOUT_MS);
    firstByte.unref();
    socket.once('close', () => clearTimeout(firstByte));
  });
  return server;
}

/**
 * The one rule for a request answered before its body was read, whatever refused it: the connection stays open
 * and the rest of the body is read and dropped (up to DRAINED_AFTER_ANSWER_BYTES, then it is closed). Closing a
 * socket that still has unread bytes resets the connection, and a client still sending then sees its write
 * fail (EPIPE, ECONNRESET) instead of the answer: undici, behind fetch and the SDK, reports that write error
 * rather than the answer it already received. A client that reads the answer stops sending (undici closes the
 * connection itself once the answer is complete); one that finishes its body keeps a usable connection. No
 * refusal sends `Connection: close`: Node then closes the socket the moment the answer is written, unread bytes
 * or not. A body that stops moving is closed by the keep-alive timeout, as an idle connection is.
 */
function drainAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    if (req.complete || req.destroyed) return;
    let left = DRAINED_AFTER_ANSWER_BYTES;
    // Whatever the handler piped the body into is done with it (a refused resumable PATCH's body stream).
    req.unpipe();
    req.on('data', (chunk: Buffer) => {
      left -= chunk.length;
      if (left < 0) req.socket.destroy();
    });
    req.resume();
  });
}

/** Counts the open connections of each client address and closes those past its cap as they arrive. */
function capPerAddress(server: Server, log: Logger, maxPerAddress: number): void {
  const open = new Map<string, number>();
  const capWarning = throttled((address: string) =>
    log.warn('too many connections from one client address: its new ones are closed until some end', {
      clientAddress: address,
      maxConnectionsPerAddress: maxPerAddress,
    }),
  );
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = open.get(address) ?? 0;
    if (count >= maxPerAddress) {
      socket.destroy();
      capWarning(address);
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = open.get(address)! - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/** Calls `warn` at most once per DROP_WARNING_INTERVAL_MS, however often it is asked to. */
function throttled<A extends unknown[]>(warn: (...args: A) => void): (...args: A) => void {
  let last = 0;
  return (...args) => {
    if (Date.now() - last < DROP_WARNING_INTERVAL_MS) return;
    last = Date.now();
    warn(...args);
  };
}
