import type { Queryable } from '../core/database.js';

export const SESSIONS_CHANNEL = 'bandcollab_sessions';

/**
 * Tells every server instance that a session ended, so each closes that session's event sockets (4401).
 * Call it in the transaction that revokes the session: the signal goes out when, and only if, it commits.
 */
export async function signalSessionRevoked(tx: Queryable, sessionId: string): Promise<void> {
  await tx`select pg_notify(${SESSIONS_CHANNEL}, ${sessionId})`;
}
