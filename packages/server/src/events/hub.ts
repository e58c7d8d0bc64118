import type { HelloMessage, ProjectEvent } from '@bandcollab/sdk/contract';
import type postgres from 'postgres';
import { inject, injectable } from 'tsyringe';
import { WebSocket } from 'ws';
import { type Principal, reaches } from '../core/auth-guard.js';
import type { Config } from '../core/config.js';
import type { Sql } from '../core/database.js';
import { CONFIG, LOGGER, SQL } from '../core/di.js';
import { DomainError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { TOKENS_CHANNEL } from '../core/personal-access-tokens-repository.js';
import { SESSIONS_CHANNEL } from '../core/sessions-repository.js';
import { EVENTS_CHANNEL, type EventNotice } from './publisher.js';
import { type ActiveSession, EventsRepository } from './repository.js';

/** Unsent bytes beyond this mark a reader too slow to keep up: it is closed rather than buffered for. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/**
 * Open sockets per session or personal access token, and per user, on this instance: room for a browser's
 * tabs (they share one session) and a few command-line watchers, and a bound on what one account can hold.
 * Past either, the upgrade answers 429; a place frees when one of them closes.
 */
const MAX_SOCKETS_PER_TOKEN = 16;
const MAX_SOCKETS_PER_USER = 32;
const SOCKET_RETRY_AFTER_SECONDS = 30;

const CLOSE_GOING_AWAY = 1001;
const CLOSE_POLICY_VIOLATION = 1008;
const CLOSE_INTERNAL_ERROR = 1011;
const CLOSE_SERVICE_RESTART = 1012;
const CLOSE_TOO_SLOW = 1013;
const CLOSE_SESSION_ENDED = 4401;
const SESSION_ENDED_REASON = 'The session has ended';
const TOKEN_REVOKED_REASON = 'The token was revoked';
const SHUTTING_DOWN_REASON = 'The server is shutting down';

/** How long `stop` waits for peers to answer the closing handshake before cutting them off. */
const CLOSE_GRACE_MS = 2000;

/** One event with its wire form, serialised once for every socket. */
interface Delivery {
  event: ProjectEvent;
  json: string;
}

interface Subscriber {
  socket: WebSocket;
  /** Who it is and what it opened with: a session, or a personal access token limited to its projects. */
  principal: Principal;
  projectIds: Set<string>;
  /** A session's lifetime is fixed at login, a token's at creation: the socket closes when it is over, as a logout would. */
  sessionExpiresAt: number;
  /** Events that arrived while the memberships were loading; null once the hello went out. */
  backlog: Delivery[] | null;
  /** Cleared at each ping, set again by the pong: still clear at the next ping means the peer is gone. */
  alive: boolean;
}

/**
 * Every open events socket of this instance. Each instance LISTENs to every committed event and to every
 * ended session, and picks what each of its sockets may see: the events of the user's projects.
 */
@injectable()
export class EventHub {
  private readonly subscribers = new Set<Subscriber>();
  private listeners: postgres.ListenMeta[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  /** Notices are handled one at a time, so reading a stored payload never lets a later event overtake it. */
  private pending: Promise<void> = Promise.resolve();
  private listenedBefore = false;
  private stopped = false;

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LOGGER) private readonly log: Logger,
    @inject(SQL) private readonly sql: Sql,
    @inject(EventsRepository) private readonly repository: EventsRepository,
  ) {}

  /** The sockets open on this instance. */
  get socketCount(): number {
    return this.subscribers.size;
  }

  /** LISTENs on a dedicated connection, which the postgres client re-establishes after a drop. */
  async start(): Promise<void> {
    this.listeners = await Promise.all([
      this.sql.listen(EVENTS_CHANNEL, (notice) => this.enqueue(notice), () => this.listening()),
      this.sql.listen(SESSIONS_CHANNEL, (sessionId) => this.endSession(sessionId)),
      this.sql.listen(TOKENS_CHANNEL, (tokenId) => this.endToken(tokenId)),
    ]);
    this.heartbeat = setInterval(() => this.pingPeers(), this.config.eventsHeartbeatSeconds * 1000);
    this.heartbeat.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    await Promise.all(this.listeners.map((listener) => listener.unlisten()));
    await this.pending;
    const closed = [...this.subscribers].map((s) => new Promise((resolve) => s.socket.once('close', resolve)));
    for (const subscriber of this.subscribers) subscriber.socket.close(CLOSE_GOING_AWAY, SHUTTING_DOWN_REASON);
    const cutOff = setTimeout(() => {
      for (const subscriber of this.subscribers) subscriber.socket.terminate();
    }, CLOSE_GRACE_MS);
    await Promise.all(closed);
    clearTimeout(cutOff);
  }

  /**
   * Throws 429 RATE_LIMITED when `principal`'s session or token, or its user, already holds as many sockets as
   * it may. Checked just before the handshake, which `add` follows without a pause: the count cannot change in between.
   */
  refuseWhenFull(principal: Principal): void {
    let ofUser = 0;
    let ofToken = 0;
    for (const { principal: holder } of this.subscribers) {
      if (holder.userId !== principal.userId) continue;
      ofUser += 1;
      if (holder.sessionId === principal.sessionId && holder.token?.tokenId === principal.token?.tokenId) ofToken += 1;
    }
    const detail =
      ofToken >= MAX_SOCKETS_PER_TOKEN
        ? `This session or token already has ${MAX_SOCKETS_PER_TOKEN} event streams open; close one first`
        : ofUser >= MAX_SOCKETS_PER_USER
          ? `This account already has ${MAX_SOCKETS_PER_USER} event streams open; close one first`
          : null;
    if (detail !== null) throw new DomainError('RATE_LIMITED', detail, { retryAfterSeconds: SOCKET_RETRY_AFTER_SECONDS });
  }

  /** Takes an authenticated socket: says hello with the user's projects, then streams their events. */
  async add(socket: WebSocket, principal: Principal): Promise<void> {
    // An upgrade on a kept-alive connection can still arrive while the server drains.
    if (this.stopped) {
      socket.close(CLOSE_GOING_AWAY, SHUTTING_DOWN_REASON);
      return;
    }
    const subscriber: Subscriber = {
      socket,
      principal,
      projectIds: new Set(),
      sessionExpiresAt: Infinity,
      backlog: [],
      alive: true,
    };
    // Registered before the memberships are read, so no event committed meanwhile is lost: it waits in the
    // backlog (one the hello already reflects may then arrive after it as well).
    this.subscribers.add(subscriber);
    socket.on('close', () => this.subscribers.delete(subscriber));
    socket.on('error', (error) => this.log.debug('events socket error', { error }));
    socket.on('pong', () => {
      subscriber.alive = true;
    });
    // The protocol has no client messages: one is a client that speaks another protocol, or a flood.
    socket.on('message', () => socket.close(CLOSE_POLICY_VIOLATION, 'This stream takes no messages'));

    let session: ActiveSession | null;
    try {
      session =
        principal.token === null
          ? await this.repository.activeSession(principal.userId, principal.sessionId)
          : { projectIds: await this.repository.projectIdsOf(principal.userId), expiresAt: principal.token.expiresAt };
    } catch (error) {
      this.log.error('could not load the memberships of an events socket', { error });
      socket.close(CLOSE_INTERNAL_ERROR, 'Try again later');
      return;
    }
    if (session === null) {
      socket.close(CLOSE_SESSION_ENDED, SESSION_ENDED_REASON);
      return;
    }
    const projectIds = session.projectIds.filter((projectId) => reaches(principal, projectId));
    for (const projectId of projectIds) subscriber.projectIds.add(projectId);
    subscriber.sessionExpiresAt = session.expiresAt.getTime();
    const hello: HelloMessage = { type: 'hello', userId: principal.userId, projectIds };
    this.send(subscriber, JSON.stringify(hello));
    const backlog = subscriber.backlog ?? [];
    subscriber.backlog = null;
    for (const delivery of backlog) this.deliver(subscriber, delivery);
  }

  /**
   * Called each time the LISTEN starts, the first time and after its connection dropped and came back.
   * Events committed in between were lost: clients reconnect, and their new hello tells them to reload.
   */
  private listening(): void {
    if (!this.listenedBefore) {
      this.listenedBefore = true;
      return;
    }
    this.log.warn('the events LISTEN connection was re-established; asking clients to reconnect', { sockets: this.subscribers.size });
    for (const subscriber of this.subscribers) subscriber.socket.close(CLOSE_SERVICE_RESTART, 'Events may have been missed; reconnect');
  }

  private enqueue(notice: string): void {
    this.pending = this.pending
      .then(() => this.dispatch(notice))
      .catch((error: unknown) => this.log.error('could not dispatch an event', { error }));
  }

  private async dispatch(notice: string): Promise<void> {
    const parsed = JSON.parse(notice) as EventNotice;
    let json = notice;
    if ('ref' in parsed) {
      const stored = await this.repository.findPayload(parsed.ref);
      if (stored === null) {
        this.log.warn('a stored event payload is gone', { eventId: parsed.ref });
        return;
      }
      json = stored;
    }
    const delivery: Delivery = { event: JSON.parse(json) as ProjectEvent, json };
    for (const subscriber of this.subscribers) {
      if (subscriber.backlog) subscriber.backlog.push(delivery);
      else this.deliver(subscriber, delivery);
    }
  }

  /** Sends the event if the user belongs to its project, following membership changes as they happen. */
  private deliver(subscriber: Subscriber, { event, json }: Delivery): void {
    if (event.type === 'member.added' && event.data.member.userId === subscriber.principal.userId && reaches(subscriber.principal, event.projectId)) {
      subscriber.projectIds.add(event.projectId);
    }
    if (!subscriber.projectIds.has(event.projectId)) return;
    this.send(subscriber, json);
    const leaves =
      event.type === 'project.deleted' || (event.type === 'member.removed' && event.data.userId === subscriber.principal.userId);
    if (leaves) subscriber.projectIds.delete(event.projectId);
  }

  private send(subscriber: Subscriber, json: string): void {
    const { socket } = subscriber;
    if (socket.readyState !== WebSocket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.log.warn('closing an events socket that does not keep up', { userId: subscriber.principal.userId });
      socket.close(CLOSE_TOO_SLOW, 'Too slow to keep up; reconnect');
      return;
    }
    socket.send(json);
  }

  private endSession(sessionId: string): void {
    for (const subscriber of this.subscribers) {
      if (subscriber.principal.sessionId === sessionId) subscriber.socket.close(CLOSE_SESSION_ENDED, SESSION_ENDED_REASON);
    }
  }

  private endToken(tokenId: string): void {
    for (const subscriber of this.subscribers) {
      if (subscriber.principal.token?.tokenId === tokenId) subscriber.socket.close(CLOSE_SESSION_ENDED, TOKEN_REVOKED_REASON);
    }
  }

  private pingPeers(): void {
    const now = Date.now();
    for (const subscriber of this.subscribers) {
      if (now >= subscriber.sessionExpiresAt) {
        subscriber.socket.close(CLOSE_SESSION_ENDED, SESSION_ENDED_REASON);
        continue;
      }
      if (!subscriber.alive) {
        subscriber.socket.terminate();
        continue;
      }
      subscriber.alive = false;
      subscriber.socket.ping();
    }
  }
}
