import { z } from 'zod';
import { millisecondsSchema, nameSchema, textSchema, uuidSchema } from './fields.js';

// Time-anchored comments and reviews of a file's versions (§14).

const id = z.string().meta({ format: 'uuid' });
const timestamp = z.string().meta({ format: 'date-time', examples: ['2026-11-21T10:00:00.000Z'] });
const count = z.int();

export const commentBodySchema = textSchema(5000, { min: 1 });

const timesRule = <Shape extends { atMs?: number | null | undefined; endMs?: number | null | undefined }>(value: Shape, ctx: z.RefinementCtx) => {
  if (value.endMs !== undefined && value.endMs !== null && (value.atMs === undefined || value.atMs === null)) {
    ctx.addIssue({ code: 'custom', path: ['endMs'], message: 'needs atMs: a range has a start' });
  } else if (value.endMs !== undefined && value.endMs !== null && value.endMs <= value.atMs!) {
    ctx.addIssue({ code: 'custom', path: ['endMs'], message: 'must be after atMs' });
  }
};

export const createCommentRequest = z
  .object({
    body: commentBodySchema,
    atMs: millisecondsSchema.nullable().optional(),
    endMs: millisecondsSchema.nullable().optional(),
    parentId: uuidSchema.nullable().optional(),
    mentions: z.array(uuidSchema, { error: 'must be an array of user ids' }).max(50, 'must name at most 50 members').optional(),
  })
  .superRefine((value, ctx) => {
    timesRule(value, ctx);
    if (value.parentId && (value.atMs != null || value.endMs != null)) {
      ctx.addIssue({ code: 'custom', path: [value.atMs != null ? 'atMs' : 'endMs'], message: 'a reply has no time of its own: it is about its parent’s' });
    }
  });

export const updateCommentRequest = z
  .object({
    body: commentBodySchema.optional(),
    atMs: millisecondsSchema.nullable().optional(),
    endMs: millisecondsSchema.nullable().optional(),
    mentions: z.array(uuidSchema, { error: 'must be an array of user ids' }).max(50, 'must name at most 50 members').optional(),
  })
  .superRefine((value, ctx) => {
    if (Object.values(value).every((field) => field === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['body'], message: 'give what changes: body, atMs, endMs or mentions' });
    }
    timesRule(value, ctx);
  });

export const guestCommentRequest = z
  .object({
    name: nameSchema.pipe(z.string().max(100, 'must be at most 100 characters')),
    body: commentBodySchema,
    atMs: millisecondsSchema.nullable().optional(),
    endMs: millisecondsSchema.nullable().optional(),
    parentId: uuidSchema.nullable().optional(),
    mentions: z.never({ error: 'a guest cannot mention members' }).optional(),
  })
  .superRefine((value, ctx) => {
    timesRule(value, ctx);
    if (value.parentId && (value.atMs != null || value.endMs != null)) {
      ctx.addIssue({ code: 'custom', path: [value.atMs != null ? 'atMs' : 'endMs'], message: 'a reply has no time of its own: it is about its parent’s' });
    }
  });

export const reviewState = z.enum(['approved', 'changes_requested'], { error: 'must be approved or changes_requested' });
export const reviewRequest = z.object({
  state: reviewState,
  note: textSchema(2000).nullable().optional(),
});

/** The formats of a comment export (`?format=`, the export's query: routes/comment-queries.ts). */
export const MARKER_FORMATS = ['midi', 'rpp', 'wav', 'audacity', 'csv', 'json'] as const;
export type MarkerFormat = (typeof MARKER_FORMATS)[number];

export type CreateCommentRequest = z.input<typeof createCommentRequest>;
export type UpdateCommentRequest = z.input<typeof updateCommentRequest>;
export type GuestCommentRequest = z.input<typeof guestCommentRequest>;
export type ReviewRequest = z.input<typeof reviewRequest>;

// ---- records

export const commentAuthor = z.object({
  id: id.nullable().meta({ description: 'null for a guest, or an account since deleted' }),
  name: z.string(),
  avatarUrl: z.string().nullable(),
  guest: z.boolean().meta({ description: 'Left through a feedback link, without an account' }),
});

const commentFields = {
  id,
  fileId: id,
  seriesId: id,
  version: count,
  cutId: id,
  projectId: id,
  parentId: id.nullable(),
  author: commentAuthor,
  body: z.string().nullable().meta({ description: 'null once deleted (a tombstone that keeps its replies)' }),
  atMs: count.nullable().meta({ description: 'Milliseconds into the version; null for a whole-mix comment and for replies' }),
  endMs: count.nullable().meta({ description: 'The end of a range; null for a point' }),
  mentions: z.array(z.object({ id, name: z.string() })),
  resolved: z.object({ at: timestamp, by: z.object({ id: id.nullable(), name: z.string() }) }).nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
  edited: z.boolean(),
  deleted: z.boolean(),
};

export const reply = z.object({ ...commentFields, replies: z.null() });
export const comment = z
  .object({ ...commentFields, replies: z.array(reply).nullable().meta({ description: 'A top-level comment’s replies, oldest first; null on a reply' }) })
  .meta({ description: 'A comment pinned to a moment (atMs) or a range (atMs–endMs) of a file version, or about the whole mix' });

export const commentCounts = z.object({ open: count, resolved: count }).meta({ description: 'Top-level, non-deleted comments of the versions chosen, whatever the status, since or page' });
export const commentPage = z.object({
  comments: z.array(comment),
  counts: commentCounts,
  nextCursor: z.string().nullable().meta({ description: 'Pass as ?cursor= for the next page; null on the last page' }),
});

export const review = z.object({
  userId: id,
  name: z.string(),
  state: reviewState,
  note: z.string().nullable(),
  at: timestamp,
  token: z.string().nullable().meta({ description: 'The name of the personal access token (review scope) the review was made through; null for a session' }),
});
export const reviewSummary = z.object({
  approved: count,
  changesRequested: count,
  openComments: count.meta({ description: 'Open top-level comments of the whole series' }),
  ready: z.boolean().meta({
    description: "Whether the version meets its project's reviewPolicy: at least `approvals` approvals, no review asking for changes, and with `noOpenComments` no open comment in the series",
  }),
});

/** What a version needs to be ready for release (§19); `review.gate_passed` is published when one gets there. */
export const reviewPolicy = z.object({
  approvals: count.meta({ description: 'Approvals of the version needed (default 1)' }),
  noOpenComments: z.boolean().meta({ description: 'Whether every top-level comment of the series must be resolved (default true)' }),
});
const approvalsSchema = z.int('must be a whole number').min(0, 'must be 0 to 1000').max(1000, 'must be 0 to 1000');
export const reviewPolicyChange = z
  .object({ approvals: approvalsSchema.optional(), noOpenComments: z.boolean('must be true or false').optional() })
  .meta({ description: 'The policy fields to change; the others stay' });
export const reviewList = z.object({ reviews: z.array(review), summary: reviewSummary });
export const withdrawnReview = z.object({ fileId: id, userId: id, deleted: z.literal(true) });

export type Comment = z.output<typeof comment>;
export type CommentAuthor = z.output<typeof commentAuthor>;
export type CommentPage = z.output<typeof commentPage>;
export type CommentCounts = z.output<typeof commentCounts>;
export type Review = z.output<typeof review>;
export type ReviewState = z.output<typeof reviewState>;
export type ReviewSummary = z.output<typeof reviewSummary>;
export type ReviewPolicy = z.output<typeof reviewPolicy>;
export type ReviewList = z.output<typeof reviewList>;
export type WithdrawnReview = z.output<typeof withdrawnReview>;
