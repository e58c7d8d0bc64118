import type { EventType } from '@bandcollab/sdk';
import type { Principal } from '../core/auth-guard.js';
import type { NewEvent } from '../events/publisher.js';

/** An event of a change `principal` made in a project (payloads as agreed in common.md). */
export const projectEvent = (principal: Principal, projectId: string, type: EventType, data: Record<string, unknown>): NewEvent => ({
  type,
  projectId,
  actor: { id: principal.userId, name: principal.name },
  data,
});
