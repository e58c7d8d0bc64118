import { openEventsSocket } from '../events-socket.js';
import { isAuthError, localProblem } from '../errors.js';
import { ROUTES } from '../contract/routes.js';
import { backoffMs, routeRequest, type Transport } from '../transport.js';
import { sleep } from '../sleep.js';
import type { HelloMessage, ProjectEvent } from '../types.js';

/** The server closes a socket with this code when its session ends (logout): reconnecting cannot help. */
const SESSION_ENDED = 4401;

export interface SubscribeOptions {
  /** Every event of the user's projects (or of `projectId`), in the order the server committed them. */
  onEvent: (event: ProjectEvent) => void;
  /**
   * The first message of each connection, reconnections included: events that happened while
   * disconnected are not replayed, so this is the moment to reload whatever the caller shows.
   */
  onHello?: (hello: HelloMessage) => void;
  /** Told each time the connection drops or cannot open; the subscription tries again after `retryInMs`. */
  onDisconnect?: (info: { code: number; reason: string; retryInMs: number }) => void;
  /** Only this project's events. */
  projectId?: string;
  signal?: AbortSignal;
}

export interface Subscription {
  /**
   * Settles when the subscription ends: resolves after `close()` or the signal, rejects with a
   * BandApiError (401) when the session ended or the credentials are refused, or with what `onEvent` threw.
   */
  closed: Promise<void>;
  close(): void;
}

interface Connection {
  opened: boolean;
  /** The server said hello: the connection worked, so the next drop starts the backoff afresh. */
  greeted: boolean;
  code: number;
  reason: string;
  /** What a callback threw: it ends the subscription. */
  failure?: { error: unknown };
}

/**
 * Live project events over the events WebSocket, with the client's access token (Node: `Authorization: Bearer`;
 * browsers, which cannot set headers on a WebSocket: the `bandcollab.bearer.*` subprotocol). Lost connections are reopened with backoff, after refreshing the access token when it is due.
 */
export class EventsResource {
  constructor(private readonly transport: Transport) {}

  subscribe(options: SubscribeOptions): Subscription {
    const stopper = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, stopper.signal]) : stopper.signal;
    const closed = this.run(options, signal);
    // Callers that never await `closed` must not crash the process with an unhandled rejection.
    closed.catch(() => undefined);
    return { closed, close: () => stopper.abort() };
  }

  private async run(options: SubscribeOptions, signal: AbortSignal): Promise<void> {
    for (let failures = 0; !signal.aborted; ) {
      const connection = await this.connectOnce(options, signal);
      if (signal.aborted) return;
      if (connection.failure) throw connection.failure.error;
      if (connection.code === SESSION_ENDED) {
        throw localProblem('UNAUTHENTICATED', 'The session has ended; sign in again');
      }
      // A refused upgrade does not say why: an authenticated request tells a dead session from a passing fault.
      if (!connection.opened) await this.assertSignedIn(signal);
      failures = connection.greeted ? 0 : failures + 1;
      const retryInMs = backoffMs(failures);
      options.onDisconnect?.({ code: connection.code, reason: connection.reason, retryInMs });
      await sleep(retryInMs, signal).catch(() => undefined);
    }
  }

  private async connectOnce(options: SubscribeOptions, signal: AbortSignal): Promise<Connection> {
    let token: string | undefined;
    try {
      token = await this.transport.freshAccessToken();
    } catch (error) {
      if (isAuthError(error)) return { opened: false, greeted: false, code: 0, reason: '', failure: { error } };
      return { opened: false, greeted: false, code: 1006, reason: error instanceof Error ? error.message : String(error) };
    }
    let socket: WebSocket;
    try {
      socket = await openEventsSocket(this.transport, `${this.transport.baseUrl.replace(/^http/, 'ws')}${ROUTES.events.path}`, token);
    } catch (error) {
      return { opened: false, greeted: false, code: 1006, reason: error instanceof Error ? error.message : String(error) };
    }
    const connection: Connection = { opened: false, greeted: false, code: 1006, reason: '' };
    const stop = () => socket.close(1000);
    signal.addEventListener('abort', stop, { once: true });
    socket.addEventListener('open', () => {
      connection.opened = true;
    });
    socket.addEventListener('message', (message) => {
      try {
        const data = JSON.parse(String(message.data)) as HelloMessage | ProjectEvent;
        if (data.type === 'hello') {
          connection.greeted = true;
          options.onHello?.(data as HelloMessage);
        } else if (options.projectId === undefined || (data as ProjectEvent).projectId === options.projectId) {
          options.onEvent(data as ProjectEvent);
        }
      } catch (error) {
        connection.failure ??= { error };
        socket.close(1000);
      }
    });
    return new Promise((resolve) => {
      socket.addEventListener('close', (event) => {
        signal.removeEventListener('abort', stop);
        resolve({ ...connection, code: event.code, reason: event.reason });
      });
    });
  }

  /** Throws the 401 of a session that is over; anything else (the network, a proxy) is worth another try. */
  private async assertSignedIn(signal: AbortSignal): Promise<void> {
    try {
      await this.transport.json({ ...routeRequest(ROUTES.me, {}), signal });
    } catch (error) {
      if (isAuthError(error)) throw error;
    }
  }
}
