import { randomUUID } from 'node:crypto';
import type { EventData, EventType, ProjectEvent } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Queryable } from '../core/database.js';
import type { Clock } from '../core/clock.js';
import { CLOCK } from '../core/di.js';
import { Notifier } from '../notifications/notifier.js';
import { WebhooksRepository } from '../webhooks/repository.js';
import { EventsRepository } from './repository.js';

export const EVENTS_CHANNEL = 'bandcollab_events';

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. */
const MAX_NOTIFY_BYTES = 7999;

/** What travels on the channel: the event itself, or the id of its stored payload when it is too large. */
export type EventNotice = ProjectEvent | { ref: string };

/** An event before it has its id and time, one shape per type. */
export type NewEvent = { [Type in EventType]: Omit<Extract<ProjectEvent, { type: Type }>, 'id' | 'at'> }[EventType];

/** An event of a change `principal` made in a project (through its personal access token, if one); `type` tells what `data` holds. */
export const projectEvent = <Type extends EventType>(principal: Pick<Principal, 'userId' | 'name'> & Partial<Pick<Principal, 'token'>>, projectId: string, type: Type, data: EventData<Type>): NewEvent =>
  ({
    type,
    projectId,
    actor: { id: principal.userId, name: principal.name, ...(principal.token ? { token: principal.token.tokenName } : {}) },
    data,
  }) as NewEvent;

/**
 * Services call `publish` inside the transaction that does the work: PostgreSQL delivers a NOTIFY only when
 * that transaction commits, so rolled-back work never emits an event, and every server instance listening
 * on the channel receives it. The same transaction enqueues the event's webhook deliveries and notification
 * emails (an outbox).
 */
@injectable()
export class EventPublisher {
  constructor(
    @inject(EventsRepository) private readonly repository: EventsRepository,
    @inject(WebhooksRepository) private readonly webhooks: WebhooksRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(Notifier) private readonly notifier: Notifier,
  ) {}

  async publish(tx: Queryable, event: NewEvent): Promise<void> {
    const envelope = { id: randomUUID(), at: new Date().toISOString(), ...event } as ProjectEvent;
    const payload = JSON.stringify(envelope);
    const { type, ...data } = envelope;
    await this.webhooks.fanOut(tx, envelope, JSON.stringify({ type, timestamp: envelope.at, data }), new Date(this.clock.now()));
    await this.notifier.onEvent(tx, envelope);
    if (Buffer.byteLength(payload) <= MAX_NOTIFY_BYTES) {
      await this.repository.notify(tx, EVENTS_CHANNEL, payload);
      return;
    }
    await this.repository.storePayload(tx, envelope.id, payload);
    const notice: EventNotice = { ref: envelope.id };
    await this.repository.notify(tx, EVENTS_CHANNEL, JSON.stringify(notice));
  }
}
