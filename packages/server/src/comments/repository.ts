import type postgres from 'postgres';
import type { ReviewPolicy } from '@bandcollab/sdk/contract';
import { injectable } from 'tsyringe';
import type { Queryable } from '../core/database.js';

/** A `comments` row with what its record shows of its file, author and resolver. */
export interface CommentRow {
  id: string;
  fileId: string;
  seriesId: string;
  version: number;
  cutId: string;
  projectId: string;
  parentId: string | null;
  authorId: string | null;
  authorName: string | null;
  authorAvatar: string | null;
  guestName: string | null;
  shareLinkId: string | null;
  body: string | null;
  atMs: number | null;
  endMs: number | null;
  mentions: { id: string; name: string }[];
  resolvedAt: Date | null;
  resolvedById: string | null;
  resolvedByName: string | null;
  edited: boolean;
  deleted: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** Which comments a page reads: those of files (a version or a series), of a cut, or of a project. */
export type CommentScope = { fileIds: string[] } | { cutId: string } | { projectId: string };

export interface CommentQuery {
  scope: CommentScope;
  status: 'open' | 'resolved' | 'all';
  /** Only threads with a comment created or changed strictly after it. */
  since: Date | null;
  /** Only threads whose top-level comment mentions this user. */
  mentioning: string | null;
  /** The page's position: after this key in the order (at_ms nulls last, created_at, id). */
  after: PageKey | null;
  limit: number;
}

/** A top-level comment's place in the page order. */
export interface PageKey {
  atMs: number | null;
  createdAt: string;
  id: string;
}

export type NewComment = Pick<CommentRow, 'id' | 'fileId' | 'parentId' | 'authorId' | 'guestName' | 'shareLinkId' | 'body' | 'atMs' | 'endMs'> & {
  mentions: string[];
};

/** At most this many guest comments per link and client address within GUEST_COMMENT_WINDOW_SECONDS. */
export const GUEST_COMMENTS_PER_WINDOW = 20;
/**
 * At most this many guest comments per link, from every address together: the link's public page lists them
 * all, and many addresses each within their allowance must not make it megabytes long.
 */
export const GUEST_COMMENTS_PER_LINK = 200;
/** At most this many replies under one comment, members' and guests' together: a thread is read whole. */
export const REPLIES_PER_THREAD = 100;
export const GUEST_COMMENT_WINDOW_SECONDS = 600;
const GUEST_COMMENT_LOCK_CLASS = 0x67637431; // "gct1"

/** A piece of SQL put into a query. */
type Fragment = postgres.PendingQuery<postgres.Row[]>;

export interface ReviewRow {
  userId: string;
  name: string;
  state: 'approved' | 'changes_requested';
  note: string | null;
  at: Date;
  /** The personal access token it was made through, by name; null for a session. */
  token: string | null;
}

export interface ReviewCounts {
  approved: number;
  changesRequested: number;
}

@injectable()
export class CommentsRepository {
  /** One comment row; null when it is gone. */
  async find(tx: Queryable, id: string): Promise<CommentRow | null> {
    const [row] = await selectRows(tx, tx`c.id = ${id}`);
    return row ?? null;
  }

  /** The replies of these top-level comments, oldest first. */
  async replies(tx: Queryable, parentIds: string[]): Promise<CommentRow[]> {
    if (parentIds.length === 0) return [];
    return selectRows(tx, tx`c.parent_id = any(${parentIds}::uuid[])`, tx`c.created_at, c.id`);
  }

  /** One page of top-level comments in page order; one more than `limit` tells whether a page follows. */
  async page(tx: Queryable, query: CommentQuery): Promise<CommentRow[]> {
    const conditions: Fragment[] = [tx`c.parent_id is null`, scopeCondition(tx, query.scope)];
    if (query.status === 'open') conditions.push(tx`c.resolved_at is null and not c.deleted`);
    if (query.status === 'resolved') conditions.push(tx`c.resolved_at is not null`);
    if (query.mentioning) conditions.push(tx`${query.mentioning}::uuid = any(c.mentions)`);
    if (query.since) {
      conditions.push(tx`(c.updated_at > ${query.since} or exists (
        select 1 from comments r where r.parent_id = c.id and r.updated_at > ${query.since}))`);
    }
    if (query.after) {
      const { atMs, createdAt, id } = query.after;
      conditions.push(tx`(c.at_ms is null, coalesce(c.at_ms, 0), c.created_at, c.id) > (${atMs === null}, ${atMs ?? 0}, ${createdAt}::timestamptz, ${id}::uuid)`);
    }
    const where = conditions.reduce((all, condition) => tx`${all} and ${condition}`);
    return selectRows(tx, where, tx`c.at_ms is null, c.at_ms, c.created_at, c.id`, query.limit + 1);
  }

  /** Open and resolved top-level, non-deleted comments in the scope, whatever the page. */
  async counts(tx: Queryable, scope: CommentScope): Promise<{ open: number; resolved: number }> {
    const [row] = await tx<{ open: number; resolved: number }[]>`
      select count(*) filter (where c.resolved_at is null)::int as open,
             count(*) filter (where c.resolved_at is not null)::int as resolved
      from comments c join files f on f.id = c.file_id
      where c.parent_id is null and not c.deleted and ${scopeCondition(tx, scope)}`;
    return row!;
  }

  async insert(tx: Queryable, comment: NewComment): Promise<void> {
    await tx`insert into comments ${tx(comment)}`;
  }

  async update(tx: Queryable, id: string, change: { body?: string; atMs?: number | null; endMs?: number | null; mentions?: string[] }): Promise<void> {
    await tx`update comments set ${tx(change)}, edited = true, updated_at = date_trunc('milliseconds', now()) where id = ${id}`;
  }

  async setResolved(tx: Queryable, id: string, by: string | null): Promise<void> {
    await tx`
      update comments set resolved_at = ${by === null ? null : tx`date_trunc('milliseconds', now())`}, resolved_by = ${by},
          updated_at = date_trunc('milliseconds', now())
      where id = ${id}`;
  }

  /** Whether a top-level comment has replies: deleting it then leaves a tombstone. */
  async hasReplies(tx: Queryable, id: string): Promise<boolean> {
    const rows = await tx`select 1 from comments where parent_id = ${id} limit 1`;
    return rows.length > 0;
  }

  async tombstone(tx: Queryable, id: string): Promise<void> {
    await tx`update comments set body = null, mentions = '{}', deleted = true, updated_at = date_trunc('milliseconds', now()) where id = ${id}`;
  }

  async delete(tx: Queryable, id: string): Promise<void> {
    await tx`delete from comments where id = ${id}`;
  }

  /** Which of these users are members of the project (mentions name members only). */
  async members(tx: Queryable, projectId: string, userIds: string[]): Promise<Set<string>> {
    const rows = await tx<{ userId: string }[]>`
      select user_id from project_members where project_id = ${projectId} and user_id = any(${userIds}::uuid[])`;
    return new Set(rows.map((row) => row.userId));
  }

  /**
   * Locks a feedback link for a guest's comment (guests' comments on one link are taken one at a time, on every
   * instance) and counts its guest comments; null when the link is closed to comments or gone.
   */
  async lockFeedbackLink(tx: Queryable, shareLinkId: string): Promise<{ guestComments: number } | null> {
    const [row] = await tx<{ guestComments: number }[]>`
      select (select count(*) from comments where share_link_id = l.id)::int as guest_comments
      from share_links l where l.id = ${shareLinkId} and l.comments_closed_at is null for update`;
    return row ?? null;
  }

  /** Locks a top-level comment for a reply (replies to one thread are taken one at a time) and counts its replies. */
  async lockThread(tx: Queryable, parentId: string): Promise<number> {
    const [row] = await tx<{ replies: number }[]>`
      select (select count(*) from comments where parent_id = p.id)::int as replies from comments p where p.id = ${parentId} for update`;
    return row?.replies ?? 0;
  }

  /** A file's duration once analysed; null before. */
  async durationMs(tx: Queryable, fileId: string): Promise<number | null> {
    const [file] = await tx<{ durationMs: number | null }[]>`select (audio->>'durationMs')::int as duration_ms from files where id = ${fileId}`;
    return file?.durationMs ?? null;
  }

  /** Who created the share link a guest comment came through; null when the link is gone. */
  async linkCreator(tx: Queryable, shareLinkId: string): Promise<string | null> {
    const [row] = await tx<{ createdBy: string | null }[]>`select created_by from share_links where id = ${shareLinkId}`;
    return row?.createdBy ?? null;
  }

  /**
   * Counts one guest comment of a link from a client address, in the transaction that records it (a refused or
   * rolled-back comment is not counted); answers the seconds until the window frees one when it is full. The
   * advisory lock makes simultaneous comments from one address count each other, on every server instance.
   */
  async countGuestComment(tx: Queryable, linkId: string, clientIp: string): Promise<{ retryAfterSeconds: number } | null> {
    await tx`select pg_advisory_xact_lock(${GUEST_COMMENT_LOCK_CLASS}, hashtext(${`${linkId} ${clientIp}`}))`;
    const [full] = await tx<{ retryAfterSeconds: number }[]>`
      select ceil(extract(epoch from at + make_interval(secs => ${GUEST_COMMENT_WINDOW_SECONDS}) - now()))::int as retry_after_seconds
      from guest_comment_marks
      where share_link_id = ${linkId} and client_ip = ${clientIp} and at > now() - make_interval(secs => ${GUEST_COMMENT_WINDOW_SECONDS})
      order by at desc offset ${GUEST_COMMENTS_PER_WINDOW - 1} limit 1`;
    if (full) return { retryAfterSeconds: Math.max(1, full.retryAfterSeconds) };
    await tx`insert into guest_comment_marks (share_link_id, client_ip) values (${linkId}, ${clientIp})`;
    return null;
  }

  /** A user's name (a guest comment's event names the link's creator). */
  async userName(tx: Queryable, userId: string): Promise<string> {
    const [row] = await tx<{ name: string }[]>`select name from users where id = ${userId}`;
    return row?.name ?? 'Former member';
  }

  /** The review policy of the file's project (§19). */
  async reviewPolicyOf(tx: Queryable, fileId: string): Promise<ReviewPolicy> {
    const [row] = await tx<{ approvals: number; noOpenComments: boolean }[]>`
      select p.review_approvals as approvals, p.review_no_open_comments as no_open_comments
      from files f join projects p on p.id = f.project_id where f.id = ${fileId}`;
    return row!;
  }

  async reviews(tx: Queryable, fileId: string): Promise<ReviewRow[]> {
    return tx<ReviewRow[]>`
      select r.user_id, u.name, r.state, r.note, r.at, r.token_name as token
      from reviews r join users u on u.id = r.user_id
      where r.file_id = ${fileId}
      order by r.at, r.user_id`;
  }

  async upsertReview(tx: Queryable, fileId: string, userId: string, state: ReviewRow['state'], note: string | null, tokenName: string | null): Promise<void> {
    await tx`
      insert into reviews (file_id, user_id, state, note, token_name) values (${fileId}, ${userId}, ${state}, ${note}, ${tokenName})
      on conflict (file_id, user_id) do update set state = excluded.state, note = excluded.note, token_name = excluded.token_name, at = now()`;
  }

  async deleteReview(tx: Queryable, fileId: string, userId: string): Promise<boolean> {
    const rows = await tx`delete from reviews where file_id = ${fileId} and user_id = ${userId} returning 1`;
    return rows.length > 0;
  }
}

function scopeCondition(tx: Queryable, scope: CommentScope): Fragment {
  if ('fileIds' in scope) return tx`c.file_id = any(${scope.fileIds}::uuid[])`;
  if ('cutId' in scope) return tx`f.cut_id = ${scope.cutId}`;
  return tx`f.project_id = ${scope.projectId}`;
}

function selectRows(tx: Queryable, where: Fragment, order: Fragment = tx`c.created_at, c.id`, limit?: number): Promise<CommentRow[]> {
  return tx<CommentRow[]>`
    select c.id, c.file_id, f.series_id, f.version, f.cut_id, f.project_id, c.parent_id,
           c.author_id, a.name as author_name, a.avatar as author_avatar, c.guest_name, c.share_link_id,
           c.body, c.at_ms, c.end_ms, c.resolved_at, c.resolved_by as resolved_by_id, rb.name as resolved_by_name,
           c.edited, c.deleted, c.created_at, c.updated_at,
           coalesce((select json_agg(json_build_object('id', m.id, 'name', m.name) order by m.name)
                     from users m where m.id = any(c.mentions)), '[]') as mentions
    from comments c
    join files f on f.id = c.file_id
    left join users a on a.id = c.author_id
    left join users rb on rb.id = c.resolved_by
    where ${where}
    order by ${order}
    ${limit === undefined ? tx`` : tx`limit ${limit}`}`;
}
