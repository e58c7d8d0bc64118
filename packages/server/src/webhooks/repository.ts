import type { WebhookAttempt, WebhookDelivery, WebhookFormat } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { SQL } from '../core/di.js';
import { JOB_KINDS } from '../core/job-kinds.js';
import { enqueue } from '../core/jobs-repository.js';
import type { Queryable, Sql } from '../core/sql.js';

/** An endpoint as stored: its secrets sealed (core/sealed.ts). */
export interface WebhookRow {
  id: string;
  /** One of the two: a project's endpoint, or an account's. */
  projectId: string | null;
  userId: string | null;
  url: string;
  events: string[];
  format: WebhookFormat;
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  secret: Buffer;
  previousSecret: Buffer | null;
  previousSecretUntil: Date | null;
  failingSince: Date | null;
  createdAt: Date;
}

export interface DeliveryRow extends Omit<WebhookDelivery, 'attempts' | 'nextAttemptAt' | 'createdAt'> {
  nextAttemptAt: Date | null;
  createdAt: Date;
  attempts: (Omit<WebhookAttempt, 'at'> & { at: string })[];
}

/** A delivery this job may attempt now: the oldest pending one of its endpoint, no other in flight. */
export interface ClaimedDelivery {
  deliveryId: string;
  body: string;
  webhook: WebhookRow;
}

export interface AttemptRecord {
  at: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string;
}

/** What an attempt leads to, decided by the deliverer (./delivery.ts). */
export type AttemptOutcome =
  | { kind: 'succeeded' }
  | { kind: 'retry'; at: Date }
  | { kind: 'failed' }
  | { kind: 'disable'; reason: string };

/** A page of deliveries: the newest first, after `cursor` (the last seq seen), `limit` of them. */
export interface DeliveriesFilter {
  status?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** Deliveries are kept 30 days (§19). */
const DELIVERY_RETENTION = '30 days';

const COLUMNS = 'id, project_id, user_id, url, events, format, description, enabled, disabled_reason, secret, previous_secret, previous_secret_until, failing_since, created_at';

/**
 * Enqueues the job that attempts the oldest pending delivery of `webhookId`, when it is due (the deliveries
 * of an endpoint go one at a time, in order: each attempt's end starts the next).
 */
async function enqueueHead(tx: Queryable, webhookId: string, now: Date): Promise<void> {
  const [head] = await tx<{ eventId: string; nextAttemptAt: Date | null }[]>`
    select d.event_id, d.next_attempt_at from webhook_deliveries d join webhooks w on w.id = d.webhook_id
    where d.webhook_id = ${webhookId} and d.status = 'pending' and w.enabled
    order by d.seq limit 1`;
  if (!head) return;
  const runAt = head.nextAttemptAt && head.nextAttemptAt > now ? head.nextAttemptAt : now;
  await enqueue(tx, JOB_KINDS.webhook_delivery, { webhookId, eventId: head.eventId }, { runAt });
}

/** An endpoint just disabled, as its owner's mail names it. */
export interface DisabledWebhook {
  id: string;
  projectId: string | null;
  userId: string | null;
  url: string;
  description: string | null;
}

@injectable()
export class WebhooksRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Inserts an endpoint unless its project (or account) already has `limit`; the row locked meanwhile so two
   * creations cannot both pass the count. False when over the limit.
   */
  async insertWithin(limit: number, row: Omit<WebhookRow, 'enabled' | 'disabledReason' | 'previousSecret' | 'previousSecretUntil' | 'failingSince' | 'createdAt'>): Promise<WebhookRow | null> {
    return this.sql.begin(async (tx) => {
      if (row.projectId) await tx`select 1 from projects where id = ${row.projectId} for update`;
      else await tx`select 1 from users where id = ${row.userId} for update`;
      const [held] = await tx<{ count: number }[]>`
        select count(*)::int as count from webhooks
        where ${row.projectId ? tx`project_id = ${row.projectId}` : tx`user_id = ${row.userId}`}`;
      if (held!.count >= limit) return null;
      const [inserted] = await tx<WebhookRow[]>`
        insert into webhooks (id, project_id, user_id, url, events, format, description, secret)
        values (${row.id}, ${row.projectId}, ${row.userId}, ${row.url}, ${tx.array(row.events)}, ${row.format}, ${row.description}, ${row.secret})
        returning ${tx.unsafe(COLUMNS)}`;
      return inserted!;
    });
  }

  async find(id: string): Promise<WebhookRow | null> {
    const [row] = await this.sql<WebhookRow[]>`select ${this.sql.unsafe(COLUMNS)} from webhooks where id = ${id}`;
    return row ?? null;
  }

  async listOfProject(projectId: string): Promise<WebhookRow[]> {
    return this.sql<WebhookRow[]>`select ${this.sql.unsafe(COLUMNS)} from webhooks where project_id = ${projectId} order by created_at, id`;
  }

  async listOfAccount(userId: string): Promise<WebhookRow[]> {
    return this.sql<WebhookRow[]>`select ${this.sql.unsafe(COLUMNS)} from webhooks where user_id = ${userId} order by created_at, id`;
  }

  /** Changes what is given; turning an endpoint on clears why it was off and starts its pending deliveries. */
  async update(id: string, change: { url?: string; events?: string[]; enabled?: boolean; description?: string | null }, now: Date): Promise<WebhookRow | null> {
    return this.sql.begin(async (tx) => {
      const set: Record<string, unknown> = {};
      if (change.url !== undefined) set.url = change.url;
      if (change.events !== undefined) set.events = tx.array(change.events);
      if (change.description !== undefined) set.description = change.description;
      if (change.enabled !== undefined) {
        set.enabled = change.enabled;
        set.disabledReason = null;
        if (change.enabled) set.failingSince = null;
      }
      const [row] = Object.keys(set).length > 0
        ? await tx<WebhookRow[]>`update webhooks set ${tx(set as Record<string, string>)} where id = ${id} returning ${tx.unsafe(COLUMNS)}`
        : await tx<WebhookRow[]>`select ${tx.unsafe(COLUMNS)} from webhooks where id = ${id}`;
      if (row && change.enabled) await enqueueHead(tx, id, now);
      return row ?? null;
    });
  }

  async delete(id: string): Promise<boolean> {
    return (await this.sql`delete from webhooks where id = ${id}`).count > 0;
  }

  /** The new sealed secret; the one it replaces keeps signing until `overlapUntil`. */
  async rotateSecret(id: string, secret: Buffer, previous: Buffer, overlapUntil: Date): Promise<WebhookRow | null> {
    const [row] = await this.sql<WebhookRow[]>`
      update webhooks set secret = ${secret}, previous_secret = ${previous}, previous_secret_until = ${overlapUntil}
      where id = ${id} returning ${this.sql.unsafe(COLUMNS)}`;
    return row ?? null;
  }

  /**
   * In the transaction that publishes `event`: one delivery per enabled endpoint that wants it (the project's,
   * and the accounts' of its members), each with the job that sends it. A rollback leaves neither.
   */
  async fanOut(tx: Queryable, event: { id: string; type: string; projectId: string }, body: string, now: Date): Promise<void> {
    const family = `${event.type.split('.')[0]}.*`;
    const rows = await tx<{ webhookId: string }[]>`
      insert into webhook_deliveries (webhook_id, event_id, type, body)
      select w.id, ${event.id}, ${event.type}, ${body} from webhooks w
      where w.enabled and w.events && ${tx.array(['*', event.type, family])}
        and (w.project_id = ${event.projectId}
             or exists (select 1 from project_members m where m.project_id = ${event.projectId} and m.user_id = w.user_id))
      on conflict (webhook_id, event_id) do nothing
      returning webhook_id`;
    for (const { webhookId } of rows) await enqueueHead(tx, webhookId, now);
  }

  /**
   * Before its project is deleted, in that transaction: the project's endpoints lose their project but are
   * kept (retired: listed nowhere, fanned out nothing more) until their pending deliveries, `project.deleted`
   * among them, are done; `complete` then deletes them.
   */
  async retireProjectEndpoints(tx: Queryable, projectId: string): Promise<void> {
    await tx`update webhooks set project_id = null, retired_at = now() where project_id = ${projectId}`;
  }

  /**
   * Deletes the retired endpoints that have nothing left to deliver: after a project's deletion commits (apart
   * from it, so that it waits on no delivery being recorded meanwhile), and as each delivery completes.
   */
  async dropIdleRetired(): Promise<void> {
    await this.sql`
      delete from webhooks w where w.retired_at is not null
        and (not w.enabled or not exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.status = 'pending'))`;
  }

  /** A delivery of no event (`webhook.test`), queued after the endpoint's pending ones. */
  async insertDelivery(webhookId: string, eventId: string, type: string, body: string, now: Date): Promise<string> {
    return this.sql.begin(async (tx) => {
      const [row] = await tx<{ id: string }[]>`
        insert into webhook_deliveries (webhook_id, event_id, type, body) values (${webhookId}, ${eventId}, ${type}, ${body}) returning id`;
      await enqueueHead(tx, webhookId, now);
      return row!.id;
    });
  }

  /**
   * Takes the delivery of (`webhookId`, `eventId`) for the job `jobId`, in a short transaction on the endpoint's
   * row: only when it is pending and due, the oldest pending one of an enabled endpoint, and no other job of
   * the endpoint is on one. A job run again after its instance died finds its own claim and goes on.
   */
  async claim(webhookId: string, eventId: string, jobId: string, now: Date): Promise<ClaimedDelivery | null> {
    return this.sql.begin(async (tx) => {
      const [webhook] = await tx<WebhookRow[]>`select ${tx.unsafe(COLUMNS)} from webhooks where id = ${webhookId} for update`;
      if (!webhook?.enabled) return null;
      const [delivery] = await tx<{ id: string; seq: string; body: string; status: string; nextAttemptAt: Date | null }[]>`
        select id, seq, body, status, next_attempt_at from webhook_deliveries where webhook_id = ${webhookId} and event_id = ${eventId}`;
      if (!delivery || delivery.status !== 'pending' || (delivery.nextAttemptAt && delivery.nextAttemptAt > now)) return null;
      const [blocked] = await tx`
        select 1 from webhook_deliveries d
        where d.webhook_id = ${webhookId} and d.status = 'pending' and d.id <> ${delivery.id}
          and (d.seq < ${delivery.seq}
               or (d.claimed_by is not null and d.claimed_by <> ${jobId}
                   and exists (select 1 from jobs j where j.id = d.claimed_by and j.state in ('queued', 'running'))))
        limit 1`;
      if (blocked) return null;
      const [other] = await tx`
        select 1 from webhook_deliveries d join jobs j on j.id = d.claimed_by
        where d.id = ${delivery.id} and d.claimed_by <> ${jobId} and j.state in ('queued', 'running')`;
      if (other) return null;
      await tx`update webhook_deliveries set claimed_by = ${jobId} where id = ${delivery.id}`;
      return { deliveryId: delivery.id, body: delivery.body, webhook };
    });
  }

  /** How many attempts the delivery's current schedule has made. */
  async scheduledAttempts(deliveryId: string): Promise<number> {
    const [row] = await this.sql<{ scheduledAttempts: number }[]>`select scheduled_attempts from webhook_deliveries where id = ${deliveryId}`;
    return row?.scheduledAttempts ?? 0;
  }

  /**
   * Records an attempt and what it leads to (`onDisabled` runs in its transaction when it disables the endpoint), frees the endpoint for its next delivery (enqueued), and drops
   * the endpoint's deliveries past their 30 days.
   */
  async complete(webhookId: string, deliveryId: string, attempt: AttemptRecord, outcome: AttemptOutcome, onDisabled?: (tx: Queryable, webhook: DisabledWebhook, reason: string) => Promise<void>): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`select 1 from webhooks where id = ${webhookId} for update`;
      await tx`insert into webhook_attempts ${tx({ deliveryId, ...attempt })}`;
      const status = outcome.kind === 'succeeded' ? 'succeeded' : outcome.kind === 'retry' ? 'pending' : 'failed';
      await tx`
        update webhook_deliveries set status = ${status}, claimed_by = null, scheduled_attempts = scheduled_attempts + 1,
                                      next_attempt_at = ${outcome.kind === 'retry' ? outcome.at : null}
        where id = ${deliveryId}`;
      if (outcome.kind === 'succeeded') await tx`update webhooks set failing_since = null where id = ${webhookId}`;
      else await tx`update webhooks set failing_since = coalesce(failing_since, ${attempt.at}) where id = ${webhookId}`;
      if (outcome.kind === 'disable') {
        // Only the change from enabled tells its owner (once), in this same transaction.
        const [disabled] = await tx<DisabledWebhook[]>`
          update webhooks set enabled = false, disabled_reason = ${outcome.reason} where id = ${webhookId} and enabled
          returning id, project_id, user_id, url, description`;
        if (disabled && onDisabled) await onDisabled(tx, disabled, outcome.reason);
      }
      await tx`delete from webhook_deliveries where webhook_id = ${webhookId} and created_at < now() - ${DELIVERY_RETENTION}::interval`;
      await enqueueHead(tx, webhookId, attempt.at);
      // A retired endpoint (its project deleted) goes with its last delivery, or when it can deliver no more.
      await tx`
        delete from webhooks w where w.id = ${webhookId} and w.retired_at is not null
          and (not w.enabled or not exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.status = 'pending'))`;
    });
  }

  /** A new attempt now, on a fresh schedule, with the same id; null when the delivery is not the endpoint's. */
  async redeliver(webhookId: string, deliveryId: string, now: Date): Promise<boolean> {
    return this.sql.begin(async (tx) => {
      const updated = await tx`
        update webhook_deliveries set status = 'pending', next_attempt_at = null, scheduled_attempts = 0
        where id = ${deliveryId} and webhook_id = ${webhookId}`;
      if (updated.count === 0) return false;
      await enqueueHead(tx, webhookId, now);
      return true;
    });
  }

  /** The endpoint's deliveries of the last 30 days, newest first, with their attempts; `cursor` the last seq seen. */
  async deliveries(webhookId: string, filter: DeliveriesFilter): Promise<{ deliveries: DeliveryRow[]; nextCursor: string | null }> {
    const before = filter.cursor ?? null;
    const rows = await this.sql<(DeliveryRow & { seq: string })[]>`
      select d.id, d.event_id, d.type, d.status, d.next_attempt_at, d.created_at, d.seq, ${this.attemptsOf()}
      from webhook_deliveries d
      where d.webhook_id = ${webhookId} and d.created_at >= now() - ${DELIVERY_RETENTION}::interval
        and (${filter.status ?? null}::text is null or d.status = ${filter.status ?? null})
        and (${before}::bigint is null or d.seq < ${before}::bigint)
      order by d.seq desc limit ${filter.limit + 1}`;
    const page = rows.slice(0, filter.limit);
    return {
      deliveries: page.map(({ seq: _seq, ...row }) => row),
      nextCursor: rows.length > filter.limit ? page[page.length - 1]!.seq : null,
    };
  }

  async findDelivery(webhookId: string, deliveryId: string): Promise<DeliveryRow | null> {
    const [row] = await this.sql<DeliveryRow[]>`
      select d.id, d.event_id, d.type, d.status, d.next_attempt_at, d.created_at, ${this.attemptsOf()}
      from webhook_deliveries d where d.id = ${deliveryId} and d.webhook_id = ${webhookId}`;
    return row ?? null;
  }

  /** A delivery `d`'s attempts, oldest first, as one JSON column. */
  private attemptsOf() {
    return this.sql`
      coalesce((select json_agg(json_build_object('at', a.at, 'durationMs', a.duration_ms, 'statusCode', a.status_code,
                                                  'error', a.error, 'responseBody', a.response_body) order by a.at)
                from webhook_attempts a where a.delivery_id = d.id), '[]') as attempts`;
  }
}
