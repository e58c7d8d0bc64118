import { z } from 'zod';
import { uuidSchema } from './fields.js';

// Review requests and email notification preferences (§19).

const id = z.string().meta({ format: 'uuid' });
const timestamp = z.string().meta({ format: 'date-time', examples: ['2026-11-21T10:00:00.000Z'] });

/** `POST /api/files/:id/review-requests`: the members asked to review this version. */
export const reviewRequestsRequest = z.object({
  userIds: z
    .array(uuidSchema, { error: 'must be an array of user ids' })
    .min(1, 'must name at least one member')
    .max(50, 'must name at most 50 members'),
});

/** One member asked to review one version (File.reviewRequests). */
export const requestedReview = z.object({
  userId: id,
  name: z.string(),
  requestedBy: z.object({ id: id.nullable(), name: z.string() }).meta({ description: 'Who asked; id null once that account is deleted' }),
  at: timestamp.meta({ description: 'When it was (last) asked' }),
});

export const reviewRequestsResult = z.object({
  fileId: id,
  reviewRequests: z.array(requestedReview).meta({ description: "Every open request of this version, the new ones included" }),
  emailed: z.boolean().meta({ description: 'Whether a mail was queued to each member asked (false with email off on this server: they learn of it from the review.requested event only; also false for those who turned reviewRequests off)' }),
});

export const digestFrequency = z.enum(['daily', 'weekly', 'off'], { error: 'must be daily, weekly or off' });

const kindSwitch = z.boolean({ error: 'must be true or false' });

/** What the caller is emailed about (defaults: every kind on, a daily digest). */
export const notificationPreferences = z.object({
  email: z.object({
    mentions: z.boolean().meta({ description: 'A comment mentions you' }),
    replies: z.boolean().meta({ description: 'A reply to your comment' }),
    reviewRequests: z.boolean().meta({ description: 'A member asks you to review a version' }),
    newVersions: z.boolean().meta({ description: 'A new version of a file you commented on or reviewed' }),
    webhooks: z.boolean().meta({ description: 'One of your webhook endpoints was disabled (its deliveries kept failing, or it answered 410)' }),
    digest: digestFrequency.meta({ description: `The rest of your projects' activity, at DIGEST_HOUR UTC (weekly: on Mondays); sent only when there is something in it` }),
  }),
  emailEnabled: z.boolean().meta({ description: 'Whether this server sends email at all (SMTP_URL and MAIL_FROM set); off, the preferences are kept but nothing is sent' }),
});

export const notificationPreferencesChange = z.object({
  email: z
    .object({
      mentions: kindSwitch.optional(),
      replies: kindSwitch.optional(),
      reviewRequests: kindSwitch.optional(),
      newVersions: kindSwitch.optional(),
      webhooks: kindSwitch.optional(),
      digest: digestFrequency.optional(),
    })
    .strict()
    .meta({ description: 'The kinds to change; the others stay' }),
});

export const NOTIFICATION_KINDS = ['mentions', 'replies', 'reviewRequests', 'newVersions', 'webhooks', 'digest'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export type ReviewRequestsRequest = z.input<typeof reviewRequestsRequest>;
export type RequestedReview = z.output<typeof requestedReview>;
export type ReviewRequestsResult = z.output<typeof reviewRequestsResult>;
export type DigestFrequency = z.output<typeof digestFrequency>;
export type NotificationPreferences = z.output<typeof notificationPreferences>;
export type NotificationPreferencesChange = z.input<typeof notificationPreferencesChange>;
