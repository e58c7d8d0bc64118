import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

export interface ActiveSession {
  projectIds: string[];
  expiresAt: Date;
}

@injectable()
export class EventsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  async notify(tx: Queryable, channel: string, payload: string): Promise<void> {
    await tx`select pg_notify(${channel}, ${payload})`;
  }

  /** Keeps an oversized event for the listeners to read, and sweeps those they have long read. */
  async storePayload(tx: Queryable, id: string, payload: string): Promise<void> {
    await tx`delete from event_payloads where created_at < now() - interval '1 hour'`;
    await tx`insert into event_payloads (id, payload) values (${id}, ${payload})`;
  }

  async findPayload(id: string): Promise<string | null> {
    const [row] = await this.sql<{ payload: string }[]>`select payload from event_payloads where id = ${id}`;
    return row?.payload ?? null;
  }

  /** The user's projects (a personal access token's socket: its session is the token, which the AuthGuard just checked). */
  async projectIdsOf(userId: string): Promise<string[]> {
    const rows = await this.sql<{ projectId: string }[]>`select project_id::text from project_members where user_id = ${userId}`;
    return rows.map((row) => row.projectId);
  }

  /** The user's projects and when the session ends, or null once it is no longer active (it ended while the socket opened). */
  async activeSession(userId: string, sessionId: string): Promise<ActiveSession | null> {
    const [row] = await this.sql<ActiveSession[]>`
      select array(select project_id::text from project_members where user_id = ${userId}) as project_ids, expires_at
      from sessions
      where id = ${sessionId} and user_id = ${userId} and revoked_at is null and expires_at > now()`;
    return row ?? null;
  }
}
