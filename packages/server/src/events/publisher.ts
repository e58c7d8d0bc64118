import { randomUUID } from 'node:crypto';
import type { EventType, ProjectEvent, UserRef } from '@bandcollab/sdk';
import { injectable } from 'tsyringe';
import type { Queryable } from '../core/database.js';

export const EVENTS_CHANNEL = 'bandcollab_events';

export interface NewEvent {
  type: EventType;
  projectId: string;
  actor: UserRef;
  data: Record<string, unknown>;
}

/**
 * Services call `publish` inside the transaction that does the work: PostgreSQL delivers a NOTIFY only when
 * that transaction commits, so rolled-back work never emits an event, and every server instance listening
 * on the channel receives it.
 */
@injectable()
export class EventPublisher {
  async publish(tx: Queryable, event: NewEvent): Promise<void> {
    const envelope: ProjectEvent = { id: randomUUID(), at: new Date().toISOString(), ...event };
    await tx`select pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify(envelope)})`;
  }
}
