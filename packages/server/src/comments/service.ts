import type { Comment, CommentPage, CreateCommentRequest, GuestCommentRequest, Review, ReviewList, ReviewRequestsResult, ReviewState, UpdateCommentRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { DomainError, forbidden, invalidField, notFound } from '../core/errors.js';
import { ProjectAccess } from '../core/project-access.js';
import { EventPublisher, projectEvent } from '../events/publisher.js';
import { reviewReady } from '../files/repository.js';
import { ReviewGate } from '../files/review-gate.js';
import { avatarUrl } from '../images/repository.js';
import type { ExportedComment } from './markers.js';
import {
  type CommentQuery,
  type CommentRow,
  type CommentScope,
  CommentsRepository,
  GUEST_COMMENT_WINDOW_SECONDS,
  GUEST_COMMENTS_PER_LINK,
  GUEST_COMMENTS_PER_WINDOW,
  type PageKey,
  REPLIES_PER_THREAD,
} from './repository.js';
import { TrashService } from '../trash/service.js';
import { Notifier } from '../notifications/notifier.js';
import { NotificationsRepository } from '../notifications/repository.js';

/** What a page asks for, as the routes read it from the query string. */
export interface PageRequest {
  status: CommentQuery['status'];
  since: Date | null;
  limit: number;
  cursor: string | null;
}

export interface FilePageRequest extends PageRequest {
  versions: 'this' | 'series';
}

export interface InboxPageRequest extends PageRequest {
  mentionsMe: boolean;
}

/** A feedback link as its guests' comments need it (shares/service.ts resolves it from the token). */
export interface FeedbackLink {
  id: string;
  createdBy: string;
  /** The version a new comment goes on: the one the link serves now. */
  fileId: string;
  /** The versions whose comments the link shows: its own, or (a link that follows the series) every one. */
  shownFileIds: string[];
}

/** An export reads at most this many threads: far beyond a review round, and a bound on one request's work. */
const EXPORT_LIMIT = 10_000;

/** Who wrote a comment whose account is gone. */
const FORMER_MEMBER = 'Former member';

/**
 * Comments pinned to moments of a file version, one level of replies, and one review per member and version.
 * Any member comments, replies, resolves, reopens and reviews; only its author edits a comment; its author or
 * a project ADMIN deletes it (and a guest's: the feedback link's creator too).
 */
@injectable()
export class CommentsService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(CommentsRepository) private readonly comments: CommentsRepository,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(TrashService) private readonly trash: TrashService,
    @inject(ReviewGate) private readonly gate: ReviewGate,
    @inject(Notifier) private readonly notifier: Notifier,
    @inject(NotificationsRepository) private readonly notifications: NotificationsRepository,
  ) {}

  async listOfFile(principal: Principal, fileId: string, request: FilePageRequest): Promise<CommentPage> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.access.require(principal, 'file', fileId, 'MEMBER', tx);
      const fileIds = request.versions === 'this' ? [fileId] : await this.seriesFileIds(tx, fileId);
      return this.page(tx, { fileIds }, request, null);
    });
  }

  async listOfCut(principal: Principal, cutId: string, request: InboxPageRequest): Promise<CommentPage> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.access.require(principal, 'cut', cutId, 'MEMBER', tx);
      return this.page(tx, { cutId }, request, request.mentionsMe ? principal.userId : null);
    });
  }

  async listOfProject(principal: Principal, projectId: string, request: InboxPageRequest): Promise<CommentPage> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.access.require(principal, 'project', projectId, 'MEMBER', tx);
      return this.page(tx, { projectId }, request, request.mentionsMe ? principal.userId : null);
    });
  }

  async get(principal: Principal, id: string): Promise<Comment> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.access.require(principal, 'comment', id, 'MEMBER', tx);
      return this.recordOf(tx, id);
    });
  }

  async create(principal: Principal, fileId: string, input: CreateCommentRequest): Promise<Comment> {
    return this.sql.begin(async (tx) => {
      const { projectId } = await this.access.require(principal, 'file', fileId, 'MEMBER', tx);
      const targetFileId = input.parentId ? await this.replyTarget(tx, fileId, input.parentId) : fileId;
      if (input.atMs != null) await this.requireWithinFile(tx, fileId, input.atMs, input.endMs ?? null);
      const mentions = await this.requireMembers(tx, projectId, input.mentions ?? []);
      const id = crypto.randomUUID();
      await this.comments.insert(tx, {
        id,
        fileId: targetFileId,
        parentId: input.parentId ?? null,
        authorId: principal.userId,
        guestName: null,
        shareLinkId: null,
        body: input.body,
        atMs: input.atMs ?? null,
        endMs: input.endMs ?? null,
        mentions,
      });
      const comment = await this.recordOf(tx, id);
      await this.announce(tx, principal, 'comment.created', comment);
      return comment;
    });
  }

  /** The comments a feedback link shows: those of its version, or of its whole series. */
  async listOfFeedbackLink(link: FeedbackLink, request: PageRequest): Promise<CommentPage> {
    return this.sql.begin('isolation level repeatable read read only', (tx) => this.page(tx, { fileIds: link.shownFileIds }, request, null));
  }

  /**
   * A guest's comment through a feedback link: on the version the link serves (a reply on its parent's), named
   * by the guest, counted against the link's limit per client address in the same transaction. The project
   * hears it with the link's creator as actor: a guest has no account, and that member opened the door.
   */
  async createGuest(link: FeedbackLink, clientIp: string, input: GuestCommentRequest): Promise<Comment> {
    return this.sql.begin(async (tx) => {
      const open = await this.comments.lockFeedbackLink(tx, link.id);
      if (!open) throw forbidden('This link is closed to new comments');
      if (open.guestComments >= GUEST_COMMENTS_PER_LINK) {
        throw forbidden(`This link has taken its ${GUEST_COMMENTS_PER_LINK} guest comments: ask the band for a new one`);
      }
      const full = await this.comments.countGuestComment(tx, link.id, clientIp);
      if (full) {
        throw new DomainError('RATE_LIMITED', `At most ${GUEST_COMMENTS_PER_WINDOW} comments per ${GUEST_COMMENT_WINDOW_SECONDS / 60} minutes through this link from one address`, full);
      }
      let fileId = link.fileId;
      if (input.parentId) {
        const parent = await this.comments.find(tx, input.parentId);
        if (!parent || !link.shownFileIds.includes(parent.fileId)) throw invalidField('parentId', 'names no comment of this file');
        if (parent.parentId !== null) throw invalidField('parentId', 'replies are one level deep: reply to the top-level comment');
        if (parent.deleted) throw invalidField('parentId', 'names a deleted comment');
        await this.requireThreadRoom(tx, parent.id);
        fileId = parent.fileId;
      }
      if (input.atMs != null) await this.requireWithinFile(tx, fileId, input.atMs, input.endMs ?? null);
      const id = crypto.randomUUID();
      await this.comments.insert(tx, {
        id,
        fileId,
        parentId: input.parentId ?? null,
        authorId: null,
        guestName: input.name,
        shareLinkId: link.id,
        body: input.body,
        atMs: input.atMs ?? null,
        endMs: input.endMs ?? null,
        mentions: [],
      });
      const comment = await this.recordOf(tx, id);
      const creator = { userId: link.createdBy, name: await this.comments.userName(tx, link.createdBy) };
      await this.announce(tx, creator, 'comment.created', comment);
      return comment;
    });
  }

  async update(principal: Principal, id: string, input: UpdateCommentRequest): Promise<Comment> {
    return this.sql.begin(async (tx) => {
      const { projectId } = await this.access.require(principal, 'comment', id, 'MEMBER', tx);
      const row = await this.requireRow(tx, id);
      if (row.authorId !== principal.userId) throw forbidden('Only its author can edit a comment');
      if (row.deleted) throw notFound('Comment');
      if (row.parentId !== null && (input.atMs != null || input.endMs != null)) {
        throw invalidField(input.atMs != null ? 'atMs' : 'endMs', 'a reply has no time of its own: it is about its parent’s');
      }
      const atMs = input.atMs === undefined ? row.atMs : input.atMs;
      const endMs = input.endMs === undefined ? (input.atMs === undefined ? row.endMs : null) : input.endMs;
      if (endMs !== null && (atMs === null || endMs <= atMs)) throw invalidField('endMs', atMs === null ? 'needs atMs: a range has a start' : 'must be after atMs');
      if (atMs !== null) await this.requireWithinFile(tx, row.fileId, atMs, endMs);
      await this.comments.update(tx, id, {
        ...(input.body === undefined ? {} : { body: input.body }),
        ...(input.atMs === undefined && input.endMs === undefined ? {} : { atMs, endMs }),
        ...(input.mentions === undefined ? {} : { mentions: await this.requireMembers(tx, projectId, input.mentions) }),
      });
      const comment = await this.recordOf(tx, id);
      await this.announce(tx, principal, 'comment.updated', comment);
      return comment;
    });
  }

  /** Resolves (`resolved` true) or reopens a top-level comment; any member. */
  async setResolved(principal: Principal, id: string, resolved: boolean): Promise<Comment> {
    return this.sql.begin(async (tx) => {
      await this.access.require(principal, 'comment', id, 'MEMBER', tx);
      const row = await this.requireRow(tx, id);
      if (row.parentId !== null) throw invalidField('id', 'a reply is resolved with its parent, not on its own');
      if (row.deleted) throw notFound('Comment');
      await this.comments.setResolved(tx, id, resolved ? principal.userId : null);
      const comment = await this.recordOf(tx, id);
      await this.announce(tx, principal, resolved ? 'comment.resolved' : 'comment.reopened', comment);
      return comment;
    });
  }

  /** A top-level comment with replies stays as a tombstone; anything else goes. */
  async delete(principal: Principal, id: string): Promise<Date | null> {
    return this.sql.begin(async (tx) => {
      const { role } = await this.access.require(principal, 'comment', id, 'MEMBER', tx);
      const row = await this.requireRow(tx, id);
      const linkCreator = row.shareLinkId === null ? null : await this.comments.linkCreator(tx, row.shareLinkId);
      const allowed = row.authorId === principal.userId || role === 'ADMIN' || (row.guestName !== null && linkCreator === principal.userId);
      if (!allowed) throw forbidden('Only its author or a project ADMIN can delete a comment');
      const comment = await this.recordOf(tx, id);
      if (this.trash.enabled) {
        // With its replies: the thread comes back whole.
        const until = await this.trash.move(tx, principal, { kind: 'comment', id, projectId: comment.projectId });
        await this.events.publish(tx, projectEvent(principal, comment.projectId, 'comment.trashed', { commentId: id, fileId: comment.fileId, trashedUntil: until.toISOString() }));
        return until;
      }
      if (row.parentId === null && (await this.comments.hasReplies(tx, id))) await this.comments.tombstone(tx, id);
      else await this.comments.delete(tx, id);
      await this.announce(tx, principal, 'comment.deleted', comment);
      return null;
    });
  }

  /**
   * The comments a marker export holds: the top-level ones of this version (or its whole series) with their
   * replies, every status or only open ones, in page order (whole-mix comments last).
   */
  async exportable(principal: Principal, fileId: string, request: { status: 'open' | 'all'; versions: 'this' | 'series' }): Promise<ExportedComment[]> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.access.require(principal, 'file', fileId, 'MEMBER', tx);
      const fileIds = request.versions === 'this' ? [fileId] : await this.seriesFileIds(tx, fileId);
      const rows = await this.comments.page(tx, { scope: { fileIds }, status: request.status, since: null, mentioning: null, after: null, limit: EXPORT_LIMIT });
      const replies = await this.comments.replies(tx, rows.map((row) => row.id));
      const authorOf = (row: CommentRow): { author: string; guest: boolean } => {
        const { name, guest } = toComment(row, null).author;
        return { author: name, guest };
      };
      // A deleted thread (a tombstone kept for its replies) is no marker: the band took that note back.
      return rows
        .filter((row) => !row.deleted)
        .map((row) => ({
          id: row.id,
          atMs: row.atMs,
          endMs: row.endMs,
          ...authorOf(row),
          body: row.body!,
          resolved: row.resolvedAt !== null,
          version: row.version,
          replies: replies
            .filter((reply) => reply.parentId === row.id)
            .map((reply) => ({ id: reply.id, ...authorOf(reply), body: reply.body!, version: reply.version })),
        }));
    });
  }

  async reviews(principal: Principal, fileId: string): Promise<ReviewList> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.access.require(principal, 'file', fileId, 'MEMBER', tx);
      const reviews = (await this.comments.reviews(tx, fileId)).map((row): Review => ({ ...row, at: row.at.toISOString() }));
      const counts = await this.comments.counts(tx, { fileIds: await this.seriesFileIds(tx, fileId) });
      const summary = {
        approved: reviews.filter((r) => r.state === 'approved').length,
        changesRequested: reviews.filter((r) => r.state === 'changes_requested').length,
        openComments: counts.open,
      };
      return { reviews, summary: { ...summary, ready: reviewReady(summary, await this.comments.reviewPolicyOf(tx, fileId)) } };
    });
  }

  async review(principal: Principal, fileId: string, state: ReviewState, note: string | null): Promise<Review> {
    return this.sql.begin(async (tx) => {
      const { projectId } = await this.access.require(principal, 'file', fileId, 'MEMBER', tx);
      await this.gate.lock(tx, { id: fileId });
      await this.comments.upsertReview(tx, fileId, principal.userId, state, note, principal.token?.tokenName ?? null);
      await this.notifications.endReviewRequest(tx, fileId, principal.userId);
      const mine = (await this.comments.reviews(tx, fileId)).find((row) => row.userId === principal.userId)!;
      await this.events.publish(tx, projectEvent(principal, projectId, 'file.reviewed', { fileId, userId: principal.userId, state }));
      await this.gate.settle(tx, principal, { id: fileId });
      return { ...mine, at: mine.at.toISOString() };
    });
  }

  /**
   * Asks members of the project to review the version (§19): File.reviewRequests, the review.requested event
   * and a mail to each who wants one, in one transaction. Any member asks; the caller cannot ask themself.
   */
  async requestReviews(principal: Principal, fileId: string, userIds: string[]): Promise<ReviewRequestsResult> {
    return this.sql.begin(async (tx) => {
      const { projectId } = await this.access.require(principal, 'file', fileId, 'MEMBER', tx);
      const asked = await this.requireMembers(tx, projectId, userIds, 'userIds');
      if (asked.includes(principal.userId)) throw invalidField('userIds', 'names yourself: ask other members to review');
      const [file] = await tx<{ name: string; version: number; seriesId: string; cutId: string }[]>`
        select name, version, series_id, cut_id from files where id = ${fileId}`;
      await this.notifications.requestReviews(tx, fileId, asked, principal.userId);
      const mailed = await this.notifier.reviewRequested(tx, { id: principal.userId, name: principal.name }, projectId, { id: fileId, name: file!.name, version: file!.version }, asked);
      await this.events.publish(
        tx,
        projectEvent(principal, projectId, 'review.requested', { fileId, seriesId: file!.seriesId, cutId: file!.cutId, name: file!.name, version: file!.version, userIds: asked }),
      );
      return { fileId, reviewRequests: await this.notifications.reviewRequests(tx, fileId), emailed: mailed.length > 0 };
    });
  }

  async withdrawReview(principal: Principal, fileId: string): Promise<void> {
    await this.sql.begin(async (tx) => {
      const { projectId } = await this.access.require(principal, 'file', fileId, 'MEMBER', tx);
      await this.gate.lock(tx, { id: fileId });
      if (!(await this.comments.deleteReview(tx, fileId, principal.userId))) throw notFound('Review');
      await this.events.publish(tx, projectEvent(principal, projectId, 'file.reviewed', { fileId, userId: principal.userId, state: null }));
      await this.gate.settle(tx, principal, { id: fileId });
    });
  }

  private async page(tx: Queryable, scope: CommentScope, request: PageRequest, mentioning: string | null): Promise<CommentPage> {
    const rows = await this.comments.page(tx, {
      scope,
      status: request.status,
      since: request.since,
      mentioning,
      after: request.cursor === null ? null : decodeCursor(request.cursor),
      limit: request.limit,
    });
    const shown = rows.slice(0, request.limit);
    const replies = await this.comments.replies(tx, shown.map((row) => row.id));
    const last = shown.at(-1);
    return {
      comments: shown.map((row) => toComment(row, replies.filter((reply) => reply.parentId === row.id))),
      counts: await this.comments.counts(tx, scope),
      nextCursor: rows.length > request.limit && last ? encodeCursor({ atMs: last.atMs, createdAt: last.createdAt.toISOString(), id: last.id }) : null,
    };
  }

  private async recordOf(tx: Queryable, id: string): Promise<Comment> {
    const row = await this.requireRow(tx, id);
    return toComment(row, row.parentId === null ? await this.comments.replies(tx, [id]) : null);
  }

  private async requireRow(tx: Queryable, id: string): Promise<CommentRow> {
    const row = await this.comments.find(tx, id);
    if (!row) throw notFound('Comment');
    return row;
  }

  /** The ids of every version of the file's series. */
  private async seriesFileIds(tx: Queryable, fileId: string): Promise<string[]> {
    const rows = await tx<{ id: string }[]>`select id from files where series_id = (select series_id from files where id = ${fileId})`;
    return rows.map((row) => row.id);
  }

  /** A reply goes on its parent's version; the parent must be a top-level comment of the same series. */
  private async replyTarget(tx: Queryable, fileId: string, parentId: string): Promise<string> {
    const parent = await this.comments.find(tx, parentId);
    const series = await this.seriesFileIds(tx, fileId);
    if (!parent || !series.includes(parent.fileId)) throw invalidField('parentId', 'names no comment of this file');
    if (parent.parentId !== null) throw invalidField('parentId', 'replies are one level deep: reply to the top-level comment');
    if (parent.deleted) throw invalidField('parentId', 'names a deleted comment');
    await this.requireThreadRoom(tx, parentId);
    return parent.fileId;
  }

  private async requireThreadRoom(tx: Queryable, parentId: string): Promise<void> {
    if ((await this.comments.lockThread(tx, parentId)) >= REPLIES_PER_THREAD) {
      throw invalidField('parentId', `the thread is full: at most ${REPLIES_PER_THREAD} replies under one comment`);
    }
  }

  /** Once the file is analysed, a time lies within its duration (and a second of slack for a late click). */
  private async requireWithinFile(tx: Queryable, fileId: string, atMs: number, endMs: number | null): Promise<void> {
    const durationMs = await this.comments.durationMs(tx, fileId);
    if (durationMs === null) return;
    const limit = durationMs + 1000;
    if (atMs > limit) throw invalidField('atMs', `must be at most ${limit} (the file lasts ${durationMs} ms)`);
    if (endMs !== null && endMs > limit) throw invalidField('endMs', `must be at most ${limit} (the file lasts ${durationMs} ms)`);
  }

  /** Mentions name members of the project; the ids, without repeats. */
  private async requireMembers(tx: Queryable, projectId: string, userIds: string[], field = 'mentions'): Promise<string[]> {
    const unique = [...new Set(userIds)];
    if (unique.length === 0) return [];
    const members = await this.comments.members(tx, projectId, unique);
    const stranger = unique.find((userId) => !members.has(userId));
    if (stranger) throw invalidField(field, `${stranger} is not a member of this project`);
    return unique;
  }

  private async announce(tx: Queryable, principal: Pick<Principal, 'userId' | 'name'>, type: CommentEventType, comment: Comment): Promise<void> {
    // Only top-level comments count as open: one opened, resolved or deleted can move the series across the gate.
    const gated = comment.parentId === null && type !== 'comment.updated';
    if (gated) await this.gate.lock(tx, { seriesId: comment.seriesId });
    await this.events.publish(
      tx,
      projectEvent(principal, comment.projectId, type, {
        commentId: comment.id,
        fileId: comment.fileId,
        seriesId: comment.seriesId,
        cutId: comment.cutId,
        parentId: comment.parentId,
        atMs: comment.atMs,
        mentions: comment.mentions.map((mention) => mention.id),
      }),
    );
    if (gated) await this.gate.settle(tx, principal, { seriesId: comment.seriesId });
  }
}

type CommentEventType = 'comment.created' | 'comment.updated' | 'comment.resolved' | 'comment.reopened' | 'comment.deleted';

/** The one mapping of a comment row to the API's Comment record; `replies` null for a reply. */
export function toComment(row: CommentRow, replies: CommentRow[] | null): Comment {
  const guest = row.guestName !== null;
  return {
    id: row.id,
    fileId: row.fileId,
    seriesId: row.seriesId,
    version: row.version,
    cutId: row.cutId,
    projectId: row.projectId,
    parentId: row.parentId,
    author: guest
      ? { id: null, name: row.guestName!, avatarUrl: null, guest: true }
      : row.authorId === null
        ? { id: null, name: FORMER_MEMBER, avatarUrl: null, guest: false }
        : { id: row.authorId, name: row.authorName!, avatarUrl: avatarUrl(row.authorAvatar), guest: false },
    body: row.deleted ? null : row.body,
    atMs: row.atMs,
    endMs: row.endMs,
    mentions: row.mentions,
    resolved: row.resolvedAt === null ? null : { at: row.resolvedAt.toISOString(), by: { id: row.resolvedById, name: row.resolvedByName ?? FORMER_MEMBER } },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    edited: row.edited,
    deleted: row.deleted,
    replies: replies === null ? null : replies.map((reply) => toComment(reply, null) as Comment & { replies: null }),
  };
}

const encodeCursor = (key: PageKey): string => Buffer.from(JSON.stringify([key.atMs, key.createdAt, key.id])).toString('base64url');

/** A cursor this server made; anything else is 400 on `cursor`. */
function decodeCursor(cursor: string): PageKey {
  try {
    const [atMs, createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const valid =
      (atMs === null || (Number.isInteger(atMs) && (atMs as number) >= 0)) &&
      typeof createdAt === 'string' &&
      !Number.isNaN(Date.parse(createdAt)) &&
      typeof id === 'string' &&
      /^[0-9a-f-]{36}$/i.test(id);
    if (valid) return { atMs: atMs as number | null, createdAt, id };
  } catch {
    // falls through to the refusal
  }
  throw invalidField('cursor', 'is not a cursor of this list (pass nextCursor as it came)');
}
