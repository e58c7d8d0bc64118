import { randomUUID } from 'node:crypto';
import type { EventType, ProjectEvent, UserRef } from '@bandcollab/sdk';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Queryable } from '../core/database.js';
import { EventsRepository } from './repository.js';

export const EVENTS_CHANNEL = 'bandcollab_events';
/** Carries the id of each revoked session, so every instance closes that session's event sockets (4401). */
export const SESSIONS_CHANNEL = 'bandcollab_sessions';

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. */
const MAX_NOTIFY_BYTES = 7999;

/** What travels on the channel: the event itself, or the id of its stored payload when it is too large. */
export type EventNotice = ProjectEvent | { ref: string };

export interface NewEvent {
  type: EventType;
  projectId: string;
  actor: UserRef;
  data: Record<string, unknown>;
}

/** An event of a change `principal` made in a project; each type's `data` is listed in the OpenAPI ProjectEvent schema. */
export const projectEvent = (principal: Principal, projectId: string, type: EventType, data: Record<string, unknown>): NewEvent => ({
  type,
  projectId,
  actor: { id: principal.userId, name: principal.name },
  data,
});

/**
 * Services call `publish` inside the transaction that does the work: PostgreSQL delivers a NOTIFY only when
 * that transaction commits, so rolled-back work never emits an event, and every server instance listening
 * on the channel receives it.
 */
@injectable()
export class EventPublisher {
  constructor(@inject(EventsRepository) private readonly repository: EventsRepository) {}

  async publish(tx: Queryable, event: NewEvent): Promise<void> {
    const envelope: ProjectEvent = { id: randomUUID(), at: new Date().toISOString(), ...event };
    const payload = JSON.stringify(envelope);
    if (Buffer.byteLength(payload) <= MAX_NOTIFY_BYTES) {
      await this.repository.notify(tx, EVENTS_CHANNEL, payload);
      return;
    }
    await this.repository.storePayload(tx, envelope.id, payload);
    const notice: EventNotice = { ref: envelope.id };
    await this.repository.notify(tx, EVENTS_CHANNEL, JSON.stringify(notice));
  }
}
