import { type IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { WebSocketServer } from 'ws';
import { AuthGuard } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import { CONFIG, LOGGER } from '../core/di.js';
import { DomainError, forbidden, invalidField, notFound } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import { requestId, sendProblem, setCommonHeaders } from '../core/http.js';
import type { Logger } from '../core/logger.js';
import { isTrustedOrigin } from '../core/origins.js';
import { EventHub } from './hub.js';

/** The subprotocol the server selects when a client offers subprotocols. */
const EVENTS_SUBPROTOCOL = 'bandcollab.v1';

/** Real-time project events over WebSocket: the upgrade of `GET /api/events`. */
@injectable()
export class EventsRoutes implements Feature {
  /**
   * Clients only answer pings: a message closes the socket (1008, in the hub), one over 4 KiB before it is read
   * (1009). The hub keeps the open sockets.
   */
  private readonly sockets = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    maxPayload: 4096,
    // A browser offers `bandcollab.v1` beside its token's subprotocol (API §17): the token is never echoed back.
    handleProtocols: (offered) => (offered.has(EVENTS_SUBPROTOCOL) ? EVENTS_SUBPROTOCOL : false),
  });
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LOGGER) private readonly log: Logger,
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(EventHub) private readonly hub: EventHub,
  ) {
    this.sockets.on('headers', (headers, req) => headers.push(`X-Request-Id: ${requestId(req)}`));
    // A malformed handshake: ws would answer with a bare text/html of its own; ours is problem details as any refusal.
    this.sockets.on('wsClientError', (error, socket, req) => refuse(req, socket, invalidField('handshake', error.message)));
  }

  /** ROUTES.events is a WebSocket upgrade, answered by the HTTP server's upgrade handler (start), not by a route. */
  register(): void {}

  async start(server: Server): Promise<void> {
    await this.hub.start();
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      void this.upgrade(req, socket, head);
    });
  }

  async stop(): Promise<void> {
    await this.hub.stop();
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // Node hands over an upgrading socket without its error handler: a peer resetting it must not crash us.
    socket.on('error', () => socket.destroy());
    try {
      // The path exactly as declared (the one canonical spelling, core/routing.ts): no `//`, dot segment or `%2F` reaches it.
      if ((req.url ?? '').split('?')[0] !== ROUTES.events.path) throw notFound('WebSocket endpoint');
      // Browsers send cookies with cross-site WebSocket requests: only the server's own and configured origins may connect.
      if (!this.isAllowedOrigin(req.headers.origin)) throw forbidden('This origin may not open the events stream');
      const principal = await this.guard.authenticate(req, { allowCookie: ROUTES.events.cookie, allowSubprotocol: true, scope: 'read' });
      this.hub.refuseWhenFull(principal);
      this.sockets.handleUpgrade(req, socket, head, (webSocket) => {
        void this.hub.add(webSocket, principal);
      });
    } catch (error) {
      if (!(error instanceof DomainError)) this.log.error('events upgrade failed', { reqId: requestId(req), error });
      refuse(req, socket, error instanceof DomainError ? error : new DomainError('INTERNAL', 'The events stream could not open'));
    }
  }

  /** Non-browser clients send no Origin; a browser's must be the server's own or a configured one. */
  private isAllowedOrigin(origin: string | undefined): boolean {
    return origin === undefined || isTrustedOrigin(this.config, origin);
  }
}

/** Answers a refused upgrade as any other API error (problem details), then closes the connection. */
function refuse(req: IncomingMessage, socket: Duplex, error: DomainError): void {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    socket.end();
  });
  setCommonHeaders(req, res);
  sendProblem(req, res, error);
}
