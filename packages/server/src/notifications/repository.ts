import type { DigestFrequency, NotificationPreferences, RequestedReview } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { SQL } from '../core/di.js';
import type { Queryable, Sql } from '../core/sql.js';

export type EmailPreferences = NotificationPreferences['email'];
/** The kinds of email a member turns on and off one by one (the digest has its frequency instead). */
export type ImmediateKind = Exclude<keyof EmailPreferences, 'digest'>;

export const DEFAULT_PREFERENCES: EmailPreferences = { mentions: true, replies: true, reviewRequests: true, newVersions: true, webhooks: true, digest: 'daily' };

const COLUMN: Record<keyof EmailPreferences, string> = {
  mentions: 'mentions',
  replies: 'replies',
  reviewRequests: 'review_requests',
  newVersions: 'new_versions',
  webhooks: 'webhooks',
  digest: 'digest',
};

/** A member a mail may go to: their address, name and what they want. */
export interface Recipient {
  id: string;
  email: string;
  name: string;
  preferences: EmailPreferences;
}

interface RecipientRow {
  id: string;
  email: string;
  name: string;
  mentions: boolean | null;
  replies: boolean | null;
  reviewRequests: boolean | null;
  newVersions: boolean | null;
  webhooks: boolean | null;
  digest: DigestFrequency | null;
}

const preferencesOf = (row: Omit<RecipientRow, 'id' | 'email' | 'name'>): EmailPreferences => ({
  mentions: row.mentions ?? DEFAULT_PREFERENCES.mentions,
  replies: row.replies ?? DEFAULT_PREFERENCES.replies,
  reviewRequests: row.reviewRequests ?? DEFAULT_PREFERENCES.reviewRequests,
  newVersions: row.newVersions ?? DEFAULT_PREFERENCES.newVersions,
  webhooks: row.webhooks ?? DEFAULT_PREFERENCES.webhooks,
  digest: row.digest ?? DEFAULT_PREFERENCES.digest,
});

const toRecipient = (row: RecipientRow): Recipient => ({ id: row.id, email: row.email, name: row.name, preferences: preferencesOf(row) });

/** The activity of one project in a digest: how many events of each type, by whom. */
export interface ProjectActivity {
  projectId: string;
  projectName: string;
  type: string;
  count: number;
  actors: string[];
}

@injectable()
export class NotificationsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  async preferences(tx: Queryable, userId: string): Promise<EmailPreferences> {
    const [row] = await tx<RecipientRow[]>`
      select mentions, replies, review_requests, new_versions, webhooks, digest from notification_preferences where user_id = ${userId}`;
    return row ? preferencesOf(row) : { ...DEFAULT_PREFERENCES };
  }

  async setPreferences(tx: Queryable, userId: string, change: Partial<EmailPreferences>): Promise<void> {
    const set = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined).map(([key, value]) => [COLUMN[key as keyof EmailPreferences], value]));
    await tx`insert into notification_preferences (user_id) values (${userId}) on conflict (user_id) do nothing`;
    if (Object.keys(set).length > 0) await tx`update notification_preferences set ${tx(set)}, updated_at = now() where user_id = ${userId}`;
  }

  /** The active members among `userIds` of the project, with their preferences. */
  async members(tx: Queryable, projectId: string, userIds: string[]): Promise<Recipient[]> {
    if (userIds.length === 0) return [];
    const rows = await tx<RecipientRow[]>`
      select u.id, u.email, u.name, p.mentions, p.replies, p.review_requests, p.new_versions, p.webhooks, p.digest
      from project_members m join users u on u.id = m.user_id left join notification_preferences p on p.user_id = u.id
      where m.project_id = ${projectId} and m.user_id = any(${userIds}::uuid[]) and u.deactivated_at is null`;
    return rows.map(toRecipient);
  }

  /** An active account, with its preferences (the owner of a webhook endpoint). */
  async account(tx: Queryable, userId: string): Promise<Recipient | null> {
    const [row] = await tx<RecipientRow[]>`
      select u.id, u.email, u.name, p.mentions, p.replies, p.review_requests, p.new_versions, p.webhooks, p.digest
      from users u left join notification_preferences p on p.user_id = u.id where u.id = ${userId} and u.deactivated_at is null`;
    return row ? toRecipient(row) : null;
  }

  /** The project's ADMINs: a project endpoint has no owner but them. */
  async projectAdmins(tx: Queryable, projectId: string): Promise<string[]> {
    const rows = await tx<{ userId: string }[]>`select user_id from project_members where project_id = ${projectId} and role = 'ADMIN'`;
    return rows.map((row) => row.userId);
  }

  /** Members who commented on, or reviewed, an earlier version of the series than `fileId`. */
  async seriesParticipants(tx: Queryable, seriesId: string, fileId: string): Promise<string[]> {
    const rows = await tx<{ userId: string }[]>`
      select c.author_id as user_id from comments c join files f on f.id = c.file_id
      where f.series_id = ${seriesId} and f.id <> ${fileId} and c.author_id is not null
      union
      select r.user_id from reviews r join files f on f.id = r.file_id where f.series_id = ${seriesId} and f.id <> ${fileId}`;
    return rows.map((row) => row.userId);
  }

  async commentAuthor(tx: Queryable, commentId: string): Promise<string | null> {
    const [row] = await tx<{ authorId: string | null }[]>`select author_id from comments where id = ${commentId}`;
    return row?.authorId ?? null;
  }

  /** What a comment's mail shows: its body, the file and the project. */
  async commentContext(tx: Queryable, commentId: string): Promise<{ body: string; atMs: number | null; guestName: string | null; fileName: string; projectName: string } | null> {
    const [row] = await tx<{ body: string; atMs: number | null; guestName: string | null; fileName: string; projectName: string }[]>`
      select c.body, c.at_ms, c.guest_name, f.name as file_name, p.name as project_name
      from comments c join files f on f.id = c.file_id join projects p on p.id = f.project_id where c.id = ${commentId}`;
    return row ?? null;
  }

  async projectName(tx: Queryable, projectId: string): Promise<string> {
    const [row] = await tx<{ name: string }[]>`select name from projects where id = ${projectId}`;
    return row?.name ?? '';
  }

  async requestReviews(tx: Queryable, fileId: string, userIds: string[], requestedBy: string): Promise<void> {
    await tx`
      insert into review_requests (file_id, user_id, requested_by)
      select ${fileId}, id, ${requestedBy} from unnest(${userIds}::uuid[]) as id
      on conflict (file_id, user_id) do update set requested_by = excluded.requested_by, requested_at = now()`;
  }

  /** A member's review answers what they were asked. */
  async endReviewRequest(tx: Queryable, fileId: string, userId: string): Promise<void> {
    await tx`delete from review_requests where file_id = ${fileId} and user_id = ${userId}`;
  }

  async reviewRequests(tx: Queryable, fileId: string): Promise<RequestedReview[]> {
    const rows = await tx<{ userId: string; name: string; byId: string | null; byName: string | null; at: Date }[]>`
      select r.user_id, u.name, r.requested_by as by_id, b.name as by_name, r.requested_at as at
      from review_requests r join users u on u.id = r.user_id left join users b on b.id = r.requested_by
      where r.file_id = ${fileId} order by r.requested_at, u.name`;
    return rows.map((row) => ({ userId: row.userId, name: row.name, requestedBy: { id: row.byId, name: row.byName ?? 'Former member' }, at: row.at.toISOString() }));
  }

  async recordActivity(tx: Queryable, row: { projectId: string; actorId: string | null; type: string; notified: string[] }): Promise<void> {
    await tx`insert into notification_activity (project_id, actor_id, type, notified) values (${row.projectId}, ${row.actorId}, ${row.type}, ${row.notified}::uuid[])`;
  }

  /** Accounts whose digest is `frequency`, with a project, and no digest yet for the period starting at `periodStart`. */
  async digestCandidates(frequency: 'daily' | 'weekly', periodStart: Date): Promise<Recipient[]> {
    const rows = await this.sql<RecipientRow[]>`
      select u.id, u.email, u.name, p.mentions, p.replies, p.review_requests, p.new_versions, p.webhooks, p.digest
      from users u left join notification_preferences p on p.user_id = u.id
      where u.deactivated_at is null and coalesce(p.digest, 'daily') = ${frequency}
        and exists (select 1 from project_members m where m.user_id = u.id)
        and not exists (select 1 from notification_digests d where d.user_id = u.id and d.period_start = ${periodStart})`;
    return rows.map(toRecipient);
  }

  /** Where the member's next digest starts: the end of their last one, or `fallback`. */
  async lastCovered(tx: Queryable, userId: string, fallback: Date): Promise<Date> {
    const [row] = await tx<{ coveredUntil: Date | null }[]>`select max(covered_until) as covered_until from notification_digests where user_id = ${userId}`;
    return row?.coveredUntil && row.coveredUntil > fallback ? row.coveredUntil : fallback;
  }

  /**
   * What others did in the member's projects after `since` that was not emailed to them at once, by project
   * and type. The projects are the ones they belong to now.
   */
  async activityFor(tx: Queryable, userId: string, since: Date, until: Date): Promise<ProjectActivity[]> {
    return tx<ProjectActivity[]>`
      select a.project_id, p.name as project_name, a.type, count(*)::int as count,
             array_remove(array_agg(distinct u.name), null) as actors
      from notification_activity a
      join project_members m on m.project_id = a.project_id and m.user_id = ${userId}
      join projects p on p.id = a.project_id
      left join users u on u.id = a.actor_id
      where a.at > ${since} and a.at <= ${until} and a.actor_id is distinct from ${userId} and not (${userId}::uuid = any(a.notified))
      group by a.project_id, p.name, a.type
      order by p.name, a.project_id, a.type`;
  }

  /** Claims the member's digest of the period: false when another run (on any instance) has it already. */
  async claimDigest(tx: Queryable, userId: string, periodStart: Date, coveredUntil: Date): Promise<boolean> {
    const claimed = await tx`
      insert into notification_digests (user_id, period_start, covered_until) values (${userId}, ${periodStart}, ${coveredUntil})
      on conflict do nothing`;
    return claimed.count === 1;
  }

  async purgeActivity(): Promise<void> {
    await this.sql`delete from notification_activity where at < now() - interval '8 days'`;
    await this.sql`delete from notification_digests where covered_until < now() - interval '30 days'`;
  }
}
