import type { HelloMessage, ProjectEvent } from '@bandcollab/sdk';
import WebSocket from 'ws';

export interface Closed {
  code: number;
  reason: string;
}

/** A test client of GET /api/events that records everything the server sends. */
export interface EventSocket {
  socket: WebSocket;
  /** The X-Request-Id of the 101 answer. */
  requestId: string | undefined;
  hello: HelloMessage;
  /** Every event received so far, in order. */
  events: ProjectEvent[];
  /** The first event (already received or still to come) that matches; fails after `timeoutMs`. */
  waitFor(match: (event: ProjectEvent) => boolean, timeoutMs?: number): Promise<ProjectEvent>;
  closed: Promise<Closed>;
  close(): void;
}

export interface OpenOptions {
  token?: string;
  cookie?: string;
  origin?: string;
  /** WebSocket subprotocols to offer (a browser's only way to send a token: `bandcollab.bearer.<base64url>`). */
  protocols?: string[];
  /** false: never answer pings, like a peer that vanished without closing. */
  autoPong?: boolean;
  /** Connect from this loopback address (127.0.0.2…): another client address. */
  localAddress?: string;
}

/** The answer to an upgrade the server refused. */
export interface Refusal {
  status: number;
  body: { code: string; status: number; requestId: string };
  headers: Record<string, string | string[] | undefined>;
}

export function eventsUrl(baseUrl: string, path = '/api/events'): string {
  return `${baseUrl.replace(/^http/, 'ws')}${path}`;
}

function connect(baseUrl: string, options: OpenOptions, path?: string): WebSocket {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.cookie) headers.cookie = options.cookie;
  if (options.origin) headers.origin = options.origin;
  return new WebSocket(eventsUrl(baseUrl, path), options.protocols ?? [], { headers, autoPong: options.autoPong ?? true, localAddress: options.localAddress });
}

/** Opens a socket and waits for its hello. */
export function openEventSocket(baseUrl: string, options: OpenOptions): Promise<EventSocket> {
  const socket = connect(baseUrl, options);
  const events: ProjectEvent[] = [];
  const waiters = new Set<{ match: (event: ProjectEvent) => boolean; resolve: (event: ProjectEvent) => void }>();
  const closed = new Promise<Closed>((resolve) => {
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
  });

  let requestId: string | undefined;
  socket.once('upgrade', (res) => {
    requestId = res.headers['x-request-id'] as string | undefined;
  });
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as HelloMessage | ProjectEvent;
      if (message.type === 'hello') {
        resolve({ socket, requestId, hello: message as HelloMessage, events, waitFor, closed, close: () => socket.close() });
        return;
      }
      const event = message as ProjectEvent;
      events.push(event);
      for (const waiter of waiters) {
        if (waiter.match(event)) {
          waiters.delete(waiter);
          waiter.resolve(event);
        }
      }
    });
  });

  function waitFor(match: (event: ProjectEvent) => boolean, timeoutMs = 5000): Promise<ProjectEvent> {
    const seen = events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (event: ProjectEvent) => {
          clearTimeout(timer);
          resolve(event);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.type))}`));
      }, timeoutMs);
      waiters.add(waiter);
    });
  }
}

/** Attempts an upgrade that the server is expected to refuse, and returns its HTTP answer. */
export function refusedUpgrade(baseUrl: string, options: OpenOptions, path?: string): Promise<Refusal> {
  const socket = connect(baseUrl, options, path);
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.close();
      reject(new Error('the upgrade was accepted'));
    });
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Refusal['body'], headers: res.headers });
      });
    });
  });
}
