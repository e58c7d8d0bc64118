import { z } from 'zod';
import { comment, commentPage, review, reviewList, reviewPolicy, reviewSummary, withdrawnReview } from './comments.js';
import { notificationPreferences, requestedReview, reviewRequestsResult } from './notifications.js';
import { ERROR_CODES } from './error-codes.js';
import { roleSchema, tokenScopeSchema } from './fields.js';

// The records the API answers with. They describe what the server sends (the OpenAPI document is generated
// from them with `io: 'output'`); clients do not validate answers with them.

const id = z.string().meta({ format: 'uuid' });
/** ISO 8601 UTC timestamp with milliseconds. */
const timestamp = z.string().meta({ format: 'date-time', examples: ['2026-11-21T10:00:00.000Z'] });
const count = z.int();
const fileType = z.enum(['CUT', 'STEM', 'IMAGE', 'SESSION']);

export const errorCode = z.enum(ERROR_CODES);

export const fieldError = z.object({ field: z.string(), message: z.string() });

export const problem = z
  .object({
    type: z.literal('about:blank'),
    title: z.string(),
    status: count,
    detail: z.string(),
    code: errorCode,
    requestId: z.string(),
    errors: z.array(fieldError).optional().meta({ description: 'Only for VALIDATION_FAILED' }),
    fileId: id.optional().meta({ description: 'UNCHANGED: the latest version of the series, whose sha256 the upload matched; PATH_TAKEN: the latest version of the series at the path' }),
  })
  .meta({ description: 'RFC 9457 problem details; every error response.' });

export const deleted = z.object({
  id,
  deleted: z.literal(true),
  trashedUntil: timestamp.optional().meta({ description: 'When it leaves the trash for good (§21); absent when the delete was for good (TRASH_RETENTION_DAYS=0)' }),
});

// ---- accounts (§3)

export const user = z.object({ id, email: z.string().meta({ format: 'email' }), name: z.string(), role: roleSchema });
export const me = user.extend({
  avatarUrl: z.string().nullable().meta({ examples: ['/uploads/avatars/3f0c….png'] }),
  createdAt: timestamp,
});
export const tokenPair = z.object({ accessToken: z.string(), refreshToken: z.string(), expiresIn: count.meta({ examples: [900] }) });
export const authResult = tokenPair.extend({ user });
export const okResult = z.object({ ok: z.literal(true) });

// ---- personal access tokens (§11)

export const personalAccessToken = z.object({
  id,
  name: z.string(),
  scope: tokenScopeSchema,
  projectIds: z.array(id).nullable().meta({ description: "null: every project of its owner; otherwise only these" }),
  tokenHint: z.string().meta({ description: 'bcp_ and the last 4 characters of the token', examples: ['bcp_x7Qa'] }),
  createdAt: timestamp,
  expiresAt: timestamp,
  lastUsedAt: timestamp.nullable().meta({ description: 'Updated at most once a minute' }),
});
export const createdPersonalAccessToken = personalAccessToken.extend({
  token: z.string().meta({ description: 'The token itself (bcp_ + 36 characters); shown only in this answer' }),
});

/** `POST /api/auth/password`: the personal access tokens the change revoked (revokeTokens) or left working. */
export const passwordChangeResult = z.object({
  ok: z.literal(true),
  revokedTokens: count.meta({ description: 'How many personal access tokens the change revoked (revokeTokens: true); else 0' }),
  tokens: z.array(personalAccessToken).meta({ description: 'The live personal access tokens that still work after the change, newest first' }),
});

// ---- projects, members, invitations (§4)

export const userRef = z.object({ id, name: z.string() });

export const project = z.object({
  id,
  name: z.string(),
  description: z.string().nullable(),
  imageUrl: z.string().nullable().meta({ examples: ['/uploads/images/3f0c….png'] }),
  createdAt: timestamp,
  memberCount: count,
  role: roleSchema.meta({ description: "The caller's membership role" }),
  reviewPolicy,
});
export const updatedProject = project.extend({ updatedAt: timestamp });

export const member = z.object({
  userId: id,
  email: z.string(),
  name: z.string(),
  avatarUrl: z.string().nullable(),
  role: roleSchema,
  joinedAt: timestamp,
});

export const invitation = z.object({ id, email: z.string(), role: roleSchema, invitedBy: userRef, createdAt: timestamp, expiresAt: timestamp });

/** The same answer whether or not the email has an account. */
export const inviteResult = z.object({
  status: z.literal('invited'),
  invitation,
  inviteUrl: z.string().meta({
    description: 'PUBLIC_URL + "/invite/" + token; the token (256 random bits, base64url, stored only as its SHA-256) appears only here',
  }),
  emailed: z.boolean().meta({ description: 'Whether the link was queued to be emailed to the invitee (email on: SMTP_URL and MAIL_FROM set); false: pass it on yourself' }),
});

/** What an invitation link offers, shown to whoever holds it. */
export const invitationView = z.object({ projectName: z.string(), invitedBy: z.object({ name: z.string() }), role: roleSchema, expiresAt: timestamp });

export const acceptedInvitation = z.object({ projectId: id, member });

// ---- vibes, cuts, files (§5, §6)

export const uploader = z
  .object({ id: id.nullable(), name: z.string(), avatarUrl: z.string().nullable() })
  .meta({ description: 'A deleted account\'s files stay in projects that have other members: `id` null, `name` "Former member"' });

// ---- audio analysis (§12)

export const analysisStatus = z.enum(['pending', 'done', 'failed', 'unsupported']).meta({
  description: 'pending until the background analysis ran; failed when the audio could not be decoded (the file still downloads); unsupported for images',
});
export const audioCodec = z.enum(['pcm', 'pcm-float', 'flac', 'mp3', 'vorbis', 'opus', 'aac', 'alac']);
export const loudness = z.object({
  integratedLufs: z.number().nullable().meta({ description: 'Gated integrated loudness (ITU-R BS.1770-4); null when everything is gated out (silence)' }),
  loudnessRangeLu: z.number().nullable().meta({ description: 'EBU R128 loudness range (EBU Tech 3342); null when too short or silent' }),
  truePeakDbtp: z.number().nullable().meta({ description: 'True peak, 4x oversampled; null for digital silence' }),
});
export const audioInfo = z.object({
  codec: audioCodec,
  durationMs: count,
  sampleRate: count,
  bitDepth: count.nullable().meta({ description: 'null for lossy codecs' }),
  channels: count,
  bitrate: count.meta({ description: 'Bits per second' }),
  loudness,
  peaksUrl: z.string().meta({ examples: ['/api/files/<id>/peaks'] }),
});
// ---- listening previews (§20)

export const previewStatus = z.enum(['pending', 'done', 'failed', 'none']).meta({
  description: 'pending until the background job made it; failed when the audio could not be decoded; none for types without audio',
});
export const previewInfo = z
  .object({
    status: previewStatus,
    url: z.string().nullable().meta({ description: 'Once done: GET it (ranges; audio/mp4)', examples: ['/api/files/<id>/preview'] }),
    bitrate: count.nullable().meta({ description: 'Bits per second: 256000 stereo, 128000 mono; null until done' }),
    bytes: count.nullable().meta({ description: 'null until done' }),
    durationMs: count.nullable().meta({ description: 'null until done' }),
  })
  .meta({ description: "A CUT's listening preview: AAC-LC in MP4 with its index first, 44.1 or 48 kHz, stereo (more channels downmixed by ITU-R BS.775) or mono" });
export const stemAudio = z.object({ codec: audioCodec, durationMs: count, sampleRate: count, bitDepth: count.nullable(), channels: count });
export const stemEntry = z.object({
  path: z.string(),
  size: count,
  audio: stemAudio.nullable().meta({ description: 'null for entries that are not audio, or whose header cannot be read' }),
  preview: previewInfo.nullable().meta({
    description: "The entry's listening preview (PREVIEW_STEMS=true; url /api/files/<id>/entries/<index>/preview); null when it gets none: not audio, or the ZIP was analysed with PREVIEW_STEMS off",
  }),
});
export const stemsSummary = z.object({
  entryCount: count,
  audioCount: count,
  sampleRates: z.array(count),
  bitDepths: z.array(count.nullable()).meta({ description: 'Distinct bit depths; null stands for lossy entries' }),
  longestMs: count.nullable(),
  shortestMs: count.nullable(),
  consistent: z.boolean().meta({ description: 'One sample rate, one bit depth, lengths within 10 ms, every audio entry readable' }),
});
export const stems = z.object({
  entries: z.array(stemEntry).meta({
    description: 'The first 100 entries in the ZIP\'s order; summary.entryCount counts them all, and GET /api/files/{id}/entries pages through every one',
  }),
  summary: stemsSummary,
});
/** `GET /api/files/:id/entries`: one page of a STEM ZIP's entries. */
export const stemEntriesPage = z.object({
  entries: z.array(stemEntry).meta({ description: "In the ZIP's order" }),
  nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page' }),
});
export const waveform = z
  .object({
    version: z.literal(2),
    channels: z.literal(1),
    sample_rate: count,
    samples_per_pixel: count,
    bits: z.literal(8),
    length: count,
    data: z.array(z.int().min(-128).max(127)).meta({ description: 'min, max pairs, 1000 to 2000 of them' }),
  })
  .meta({ description: 'The waveform in the waveform-data format version 2 (peaks.js, wavesurfer.js)' });

export const fileSeries = z
  .object({
    id: id.meta({ description: "The series id: its first version's file id, kept after that version is deleted" }),
    version: count.meta({ description: '1…n; a number is never given twice, also after a version is deleted' }),
    latest: z.boolean().meta({ description: 'The highest remaining version' }),
    count: count.meta({ description: 'The versions that remain' }),
  })
  .meta({ description: 'The versions of one mix (§14): an upload with versionOf becomes the next version; any other starts a series' });

export const fileRecord = z.object({
  id,
  cutId: id,
  name: z.string().meta({ description: 'Display name' }),
  path: z.string().nullable().meta({
    description: "Its relative POSIX path in the cut's folder (§16), NFC; the series' path, so every version shows the latest one's; null for files uploaded without one",
  }),
  type: fileType,
  size: count,
  mimeType: z.string(),
  url: z.string().meta({ examples: ['/uploads/files/<id>.mp3'] }),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  uploadedBy: uploader,
  createdAt: timestamp,
  analysis: analysisStatus,
  audio: audioInfo.nullable().meta({ description: 'A CUT once analysed; null otherwise' }),
  preview: previewInfo,
  stems: stems.nullable().meta({ description: 'A STEM ZIP once analysed; null otherwise' }),
  series: fileSeries,
  review: reviewSummary.meta({ description: "This version's reviews (they do not carry over to the next version) and the open top-level comments of the whole series" }),
  reviewRequests: z.array(requestedReview).meta({ description: 'The members asked to review this version (POST /api/files/{id}/review-requests) who have not reviewed it since; oldest first' }),
});

/** `GET /api/files/:id/versions`: every remaining version of a file's series, oldest first. */
export const fileVersions = z.object({
  seriesId: id.meta({ description: "The series id: its first version's file id, kept after that version is deleted" }),
  versions: z.array(fileRecord).meta({ description: 'Oldest (lowest version) first' }),
});

/** `DELETE /api/files/:id?series=all`: how many versions went. */
export const deletedSeries = z.object({
  seriesId: id,
  deleted: count.meta({ description: 'The versions deleted' }),
  trashedUntil: timestamp.optional().meta({ description: 'When the series leaves the trash for good (§21); absent when the delete was for good' }),
});

/** `DELETE /api/files/:id`: the version (`{id, deleted: true}`), or with `?series=all` the series. */
export const deleteFileResult = z.union([deleted, deletedSeries]).meta({ description: '{id, deleted: true} for one version; {seriesId, deleted: <versions>} with ?series=all' });

export const vibe = z.object({
  id,
  projectId: id,
  name: z.string(),
  imageUrl: z.string().nullable(),
  position: z.int().min(0),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export const cut = z.object({ id, vibeId: id, projectId: id, name: z.string(), createdAt: timestamp, updatedAt: timestamp });
export const cutWithFiles = cut.extend({ files: z.array(fileRecord) });
export const vibeWithCuts = vibe.extend({ cuts: z.array(cutWithFiles).meta({ description: 'Oldest first' }) });

export const projectDetail = updatedProject.extend({
  members: z.array(member),
  vibes: z.array(vibeWithCuts).meta({ description: 'By position' }),
  invitations: z.array(invitation).meta({ description: 'Pending ones; empty for non-ADMIN callers' }),
});

export const reorderVibesResult = z.object({ projectId: id, vibes: z.array(vibe) });

export const shareLink = z.object({ token: z.string(), shareUrl: z.string().meta({ format: 'uri' }), expiresAt: timestamp.nullable() });
export const revokeSharesResult = z.object({ revoked: count });

export const sharedFile = z.object({
  kind: z.literal('file'),
  name: z.string(),
  type: fileType,
  size: count,
  mimeType: z.string(),
  createdAt: timestamp,
  expiresAt: timestamp.nullable(),
  downloadUrl: z.string().nullable().meta({ description: 'null on a stream-only link (made with download: false): only the preview plays' }),
  previewUrl: z.string().nullable().meta({ description: 'The preview under the link (GET /api/share/<token>/preview) once made; null otherwise' }),
  download: z.boolean().meta({ description: 'false: a stream-only link, whose original and archive answer 403 DOWNLOAD_DISABLED' }),
  version: count.meta({ description: 'The version served: for a link that follows the series, its newest at this access' }),
  follow: z.enum(['this', 'latest']),
  allowComments: z.boolean().meta({ description: 'A feedback link: GET and POST /api/share/{token}/comments' }),
});

/** A file of a shared cut, as the link shows it (no uploader, no project ids). */
export const sharedCutFile = z.object({
  id,
  name: z.string(),
  type: fileType,
  size: count,
  mimeType: z.string(),
  audio: audioInfo.nullable().meta({ description: "A CUT's audio facts once analysed (its peaksUrl under the link); null otherwise" }),
  downloadUrl: z.string().nullable().meta({ description: 'The bytes as an attachment; without `?download=1` they play inline; null on a stream-only link' }),
  previewUrl: z.string().nullable().meta({ description: 'The preview under the link (GET /api/share/<token>/files/<id>/preview) once made; null otherwise' }),
  peaksUrl: z.string().nullable().meta({ description: 'The waveform under the link (GET /api/share/<token>/files/<id>/peaks) once analysed; null otherwise' }),
});

export const sharedCut = z.object({
  kind: z.literal('cut'),
  name: z.string(),
  expiresAt: timestamp.nullable(),
  archiveUrl: z.string().nullable().meta({ description: 'Every file as one ZIP; null on a stream-only link' }),
  download: z.boolean().meta({ description: 'false: a stream-only link, whose originals and archive answer 403 DOWNLOAD_DISABLED' }),
  files: z.array(sharedCutFile).meta({ description: "The cut's files when the link is opened, oldest first" }),
});

/** `GET /api/share/:token` with `Accept: application/json`: a file link or a cut link, told apart by `kind`. */
export const sharedItem = z.discriminatedUnion('kind', [sharedFile, sharedCut]);

/** A live link as its project's members see it: never its token. */
export const shareRecord = z.object({
  id,
  createdAt: timestamp,
  createdBy: userRef,
  expiresAt: timestamp.nullable(),
  lastAccessedAt: timestamp.nullable(),
  accessCount: count.meta({ description: 'Page views and downloads; HEAD requests and range continuations of a download do not count' }),
  download: z.boolean().meta({ description: 'false: a stream-only link (the preview and the page only)' }),
  plays: count.meta({ description: 'Preview fetches from offset 0 by a client the link had not seen in 30 minutes' }),
  downloads: count.meta({ description: 'Downloads of the original or the archive that count as accesses' }),
});

/** Whether a feedback link takes new comments (its creator or a project ADMIN closes and reopens it). */
export const feedbackLinkState = z.object({ id, commentsClosed: z.boolean() });

export const sizeCount = z.object({ size: count, count });
export const storageBreakdown = z
  .object({ audio: sizeCount, stems: sizeCount, images: sizeCount, other: sizeCount, previews: sizeCount })
  .meta({ description: 'audio: CUT files, stems: STEM, images: IMAGE files and the images of projects, vibes and avatars, other: SESSION files, previews: the listening previews the server made of the CUT files (§20)' });
export const siteStorage = z.object({ totalSize: count, fileCount: count, breakdown: storageBreakdown, userCount: count, projectCount: count });
export const storageQuota = z.object({ limitBytes: count, usedBytes: count });
export const storageStats = z.object({
  totalSize: count,
  fileCount: count,
  breakdown: storageBreakdown,
  quota: storageQuota.nullable().meta({
    description: "The caller's quota (USER_QUOTA_MB) and the bytes their files and images hold; null without a quota",
  }),
  site: siteStorage.optional().meta({ description: 'Only for site ADMINs: totals over all users' }),
});

// ---- site administration: storage per user or project, accounts (site ADMIN only)

export const incompleteUploads = z
  .object({ count, receivedBytes: count, lengthBytes: count.meta({ description: 'The length the uploads declared, which the quota holds for them' }) })
  .meta({ description: 'Resumable uploads started and not completed (nor expired)' });
export const adminUser = user.extend({
  active: z.boolean().meta({ description: 'false: deactivated; cannot sign in, its files stay' }),
  createdAt: timestamp,
  deactivatedAt: timestamp.nullable(),
  lastSignInAt: timestamp.nullable().meta({ description: 'When its newest session started' }),
});
/** A live share link of an account, as its deactivation or activation names it. */
export const accountShareLink = z.object({
  id,
  kind: z.enum(['file', 'cut']),
  targetId: id.meta({ description: 'The shared file or cut' }),
  name: z.string().meta({ description: "The file's or cut's name" }),
  projectId: id,
  createdAt: timestamp,
  expiresAt: timestamp.nullable(),
});
export const adminUserActivation = adminUser.extend({
  shareLinks: z.array(accountShareLink).meta({
    description:
      'The live share links the account made (file and cut links, feedback links included): suspended while it is deactivated (404, as an unknown link; comments through them too), serving again once it is active',
  }),
});
export const userStorage = z.object({
  user: adminUser,
  totalSize: count,
  fileCount: count,
  breakdown: storageBreakdown,
  quota: storageQuota.nullable().meta({ description: 'USER_QUOTA_MB and the bytes the user\'s files and images hold; null without a quota' }),
  incompleteUploads,
});
export const projectStorage = z.object({
  project: z.object({ id, name: z.string() }),
  totalSize: count,
  fileCount: count,
  breakdown: storageBreakdown.meta({ description: 'Files of every member, the cover and the vibe images' }),
  incompleteUploads,
});
// ---- the job queue (§18, site ADMIN only)

export const jobState = z.enum(['queued', 'running', 'done', 'failed']).meta({ description: 'failed: dead, its attempts spent (kept 30 days; done jobs a day)' });
export const jobKind = z
  .enum(['analysis', 'preview', 'webhook_delivery', 'email', 'digest', 'trash_purge', 'upload_purge', 'expired_rows_purge'])
  .meta({ description: 'What the job does' });
export const jobCount = z.object({ kind: jobKind, state: jobState, count });
export const failedJob = z.object({
  id,
  kind: jobKind,
  payload: z.record(z.string(), z.unknown()).meta({ description: 'What the job was given (ids, never secrets)' }),
  attempts: count,
  maxAttempts: count,
  lastError: z.string().nullable().meta({ description: 'What its last attempt threw' }),
  createdAt: timestamp,
  finishedAt: timestamp.nullable().meta({ description: 'When its last attempt failed' }),
});
export const adminJobs = z.object({
  counts: z.array(jobCount).meta({ description: 'Jobs by kind and state (kinds and states without any are left out)' }),
  oldestQueuedSeconds: z.number().nullable().meta({ description: 'How long the oldest job due has waited to start; null when none waits' }),
  failed: z.array(failedJob).meta({ description: 'The last 100 failed jobs, the newest first' }),
});
export const retriedJob = z.object({ id, state: jobState });

// ---- webhooks (§19)

export const webhookFormat = z.enum(['standard', 'discord', 'slack']);
export const webhook = z.object({
  id,
  projectId: id.nullable().meta({ description: "null: an account's endpoint (events of every project its owner belongs to)" }),
  url: z.string().meta({ format: 'uri' }),
  events: z.array(z.string()).meta({ description: 'Event types, `prefix.*` wildcards or `*`', examples: [['file.uploaded', 'comment.*']] }),
  format: webhookFormat,
  description: z.string().nullable(),
  enabled: z.boolean(),
  disabledReason: z.string().nullable().meta({ description: 'Why the server disabled it (410 Gone, 5 days of failures); null when enabled or disabled by hand' }),
  createdAt: timestamp,
  secretOverlapUntil: timestamp.nullable().meta({ description: 'Until then the secret before the last rotation signs beside the current one' }),
});
export const createdWebhook = webhook.extend({
  secret: z.string().meta({ description: '`whsec_` + base64 of 32 random bytes; shown only in this answer', examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }),
});
export const webhookAttempt = z.object({
  at: timestamp,
  durationMs: count,
  statusCode: count.nullable(),
  error: z.string().nullable(),
  responseBody: z.string().meta({ description: "The first 4 KiB of the endpoint's answer" }),
});
export const webhookDelivery = z.object({
  id: id.meta({ description: 'The `webhook-id` header, the same on every attempt' }),
  eventId: id,
  type: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  attempts: z.array(webhookAttempt),
  nextAttemptAt: timestamp.nullable(),
  createdAt: timestamp,
});
export const webhookDeliveryPage = z.object({ deliveries: z.array(webhookDelivery), nextCursor: z.string().nullable() });
export const largestFile = z.object({
  id,
  name: z.string(),
  type: fileType,
  size: count,
  project: z.object({ id, name: z.string() }),
  uploadedBy: z.object({ id, email: z.string() }).nullable().meta({ description: 'null: the account was deleted' }),
  createdAt: timestamp,
});
const largestFiles = z.array(largestFile).meta({ description: 'The `top` largest files of the site, largest first; empty without `top`' });
export const adminStorage = z.discriminatedUnion('by', [
  z.object({ by: z.literal('user'), users: z.array(userStorage).meta({ description: 'Every account, most bytes first' }), largestFiles }),
  z.object({ by: z.literal('project'), projects: z.array(projectStorage).meta({ description: 'Every project, most bytes first' }), largestFiles }),
]);

// ---- operations (§9)

export const health = z.object({ status: z.literal('ok'), db: z.literal('ok'), version: z.string() });


export type Role = z.output<typeof roleSchema>;
export type TokenScope = z.output<typeof tokenScopeSchema>;
export type FieldError = z.output<typeof fieldError>;
export type Problem = z.output<typeof problem>;
export type Deleted = z.output<typeof deleted>;
export type User = z.output<typeof user>;
export type Me = z.output<typeof me>;
export type TokenPair = z.output<typeof tokenPair>;
export type AuthResult = z.output<typeof authResult>;
export type OkResult = z.output<typeof okResult>;
export type LogoutResult = z.output<typeof okResult>;
/** `POST /api/auth/idp/link`: the provider account is linked to the caller's. */
export type IdpLinkResult = z.output<typeof okResult>;
/** `POST /api/auth/password`: the password is changed and the account's other sessions ended. */
export type PasswordChangeResult = z.output<typeof passwordChangeResult>;
export type PersonalAccessToken = z.output<typeof personalAccessToken>;
export type CreatedPersonalAccessToken = z.output<typeof createdPersonalAccessToken>;
export type UserRef = z.output<typeof userRef>;
export type Project = z.output<typeof project>;
export type UpdatedProject = z.output<typeof updatedProject>;
export type Member = z.output<typeof member>;
export type Invitation = z.output<typeof invitation>;
export type ProjectDetail = z.output<typeof projectDetail>;
export type InviteResult = z.output<typeof inviteResult>;
export type InvitationView = z.output<typeof invitationView>;
export type AcceptedInvitation = z.output<typeof acceptedInvitation>;
export type Vibe = z.output<typeof vibe>;
export type Cut = z.output<typeof cut>;
export type CutWithFiles = z.output<typeof cutWithFiles>;
export type VibeWithCuts = z.output<typeof vibeWithCuts>;
export type ReorderVibesResult = z.output<typeof reorderVibesResult>;
export type Uploader = z.output<typeof uploader>;
/** The API's `File` record (named FileRecord so it does not shadow the global File). */
export type FileRecord = z.output<typeof fileRecord>;
export type FileSeries = z.output<typeof fileSeries>;
export type FileVersions = z.output<typeof fileVersions>;
export type DeletedSeries = z.output<typeof deletedSeries>;
export type ShareLink = z.output<typeof shareLink>;
export type RevokeSharesResult = z.output<typeof revokeSharesResult>;
export type SharedFile = z.output<typeof sharedFile>;
export type SharedCutFile = z.output<typeof sharedCutFile>;
export type SharedCut = z.output<typeof sharedCut>;
export type SharedItem = z.output<typeof sharedItem>;
export type ShareRecord = z.output<typeof shareRecord>;
export type FeedbackLinkState = z.output<typeof feedbackLinkState>;
export type SizeCount = z.output<typeof sizeCount>;
export type StorageBreakdown = z.output<typeof storageBreakdown>;
export type SiteStorage = z.output<typeof siteStorage>;
export type StorageQuota = z.output<typeof storageQuota>;
export type StorageStats = z.output<typeof storageStats>;
export type IncompleteUploads = z.output<typeof incompleteUploads>;
export type AdminUser = z.output<typeof adminUser>;
export type AccountShareLink = z.output<typeof accountShareLink>;
export type AdminUserActivation = z.output<typeof adminUserActivation>;
export type UserStorage = z.output<typeof userStorage>;
export type ProjectStorage = z.output<typeof projectStorage>;
export type LargestFile = z.output<typeof largestFile>;
export type AdminStorage = z.output<typeof adminStorage>;
export type JobState = z.output<typeof jobState>;
export type JobKind = z.output<typeof jobKind>;
export type JobCount = z.output<typeof jobCount>;
export type FailedJob = z.output<typeof failedJob>;
export type AdminJobs = z.output<typeof adminJobs>;
export type RetriedJob = z.output<typeof retriedJob>;
export type WebhookFormat = z.output<typeof webhookFormat>;
export type Webhook = z.output<typeof webhook>;
export type CreatedWebhook = z.output<typeof createdWebhook>;
export type WebhookAttempt = z.output<typeof webhookAttempt>;
export type WebhookDelivery = z.output<typeof webhookDelivery>;
export type WebhookDeliveryPage = z.output<typeof webhookDeliveryPage>;
export type Health = z.output<typeof health>;
export type AnalysisStatus = z.output<typeof analysisStatus>;
export type AudioCodec = z.output<typeof audioCodec>;
export type Loudness = z.output<typeof loudness>;
export type AudioInfo = z.output<typeof audioInfo>;
export type PreviewInfo = z.output<typeof previewInfo>;
export type PreviewStatus = z.output<typeof previewStatus>;
export type StemAudio = z.output<typeof stemAudio>;
export type StemEntry = z.output<typeof stemEntry>;
export type StemsSummary = z.output<typeof stemsSummary>;
export type Stems = z.output<typeof stems>;
export type StemEntriesPage = z.output<typeof stemEntriesPage>;
export type Waveform = z.output<typeof waveform>;

// ---- trash (§21)

export const trashKind = z.enum(['project', 'vibe', 'cut', 'series', 'file', 'comment', 'cover', 'vibe_image']).meta({
  description:
    'cover and vibe_image: a project cover or vibe image cleared or replaced (PATCH image); restoring one puts it back, and the image its project or vibe holds then goes to the trash in its place',
});

/** A thing in the trash: `id` is the project's, vibe's, cut's, series', file version's or comment's own id (a trashed image's own). */
export const trashItem = z.object({
  id: id.meta({ description: "The trashed thing's own id (a project's, vibe's, cut's, series', file version's or comment's); a trashed cover or vibe image has one of its own" }),
  kind: trashKind,
  name: z.string().meta({ description: "What it was called: a name, a file's name, a comment's first words" }),
  projectId: id,
  deletedBy: userRef.nullable().meta({ description: 'null once that account is deleted' }),
  trashedAt: timestamp,
  trashedUntil: timestamp,
});

export const restoredTrash = z.object({
  id,
  kind: trashKind,
  restored: z.literal(true),
  name: z.string().meta({ description: 'Its name now: with " (restored)" when the old one was taken meanwhile' }),
});

export const purgedTrash = z.object({ purging: count.meta({ description: 'The things queued to be deleted for good' }) });

export type TrashKind = z.output<typeof trashKind>;
export type TrashItem = z.output<typeof trashItem>;
export type RestoredTrash = z.output<typeof restoredTrash>;
export type PurgedTrash = z.output<typeof purgedTrash>;

// ---- events (§7)

/** Who caused an event: a user, and the personal access token it came through, if one. */
export const eventActor = userRef.extend({
  token: z.string().optional().meta({ description: 'The name of the personal access token the action came through; absent for a session' }),
});

/** An event envelope whose `data` is `data`: one schema per event type, so `type` tells what `data` holds. */
const event = <Type extends string, Data extends z.ZodRawShape>(type: Type, data: Data) =>
  z.object({ id, type: z.literal(type), projectId: id, actor: eventActor, at: timestamp, data: z.object(data) });

export const projectEvent = z.discriminatedUnion('type', [
  event('project.updated', { project: updatedProject }),
  event('project.deleted', { projectId: id }),
  event('member.added', { member }),
  event('member.removed', { userId: id }),
  event('member.role_changed', { member }),
  event('member.updated', { member }),
  event('vibe.created', { vibe }),
  event('vibe.updated', { vibe }),
  event('vibe.deleted', { vibeId: id }),
  event('vibes.reordered', { vibeIds: z.array(id) }),
  event('cut.created', { cut }),
  event('cut.updated', { cut }),
  event('cut.moved', { cut, fromVibeId: id }),
  event('cut.deleted', { cutId: id, vibeId: id }),
  event('file.uploaded', { file: fileRecord }),
  event('file.deleted', { fileId: id, cutId: id }),
  event('file.shared', { fileId: id, expiresAt: timestamp.nullable().meta({ description: "When the new link expires (null: never); the link's token is never in an event" }) }),
  event('file.analyzed', { fileId: id, cutId: id, analysis: analysisStatus }),
  event('preview.ready', { fileId: id, cutId: id, preview: previewInfo }),
  event('cut.shared', { cutId: id, expiresAt: timestamp.nullable().meta({ description: "When the new link expires (null: never); the link's token is never in an event" }) }),
  ...(['comment.created', 'comment.updated', 'comment.resolved', 'comment.reopened', 'comment.deleted'] as const).map((type) =>
    event(type, { commentId: id, fileId: id, seriesId: id, cutId: id, parentId: id.nullable(), atMs: count.nullable(), mentions: z.array(id) }),
  ),
  event('project.trashed', { projectId: id, trashedUntil: timestamp }),
  event('project.restored', { projectId: id }),
  event('vibe.trashed', { vibeId: id, trashedUntil: timestamp }),
  event('vibe.restored', { vibeId: id }),
  event('cut.trashed', { cutId: id, vibeId: id, trashedUntil: timestamp }),
  event('cut.restored', { cutId: id, vibeId: id }),
  event('file.trashed', { fileId: id, cutId: id, trashedUntil: timestamp }),
  event('file.restored', { fileId: id, cutId: id }),
  event('comment.trashed', { commentId: id, fileId: id, trashedUntil: timestamp }),
  event('comment.restored', { commentId: id, fileId: id }),
  event('file.reviewed', {
    fileId: id,
    userId: id,
    state: z.enum(['approved', 'changes_requested']).nullable().meta({ description: 'null: the member withdrew their review' }),
  }),
  // A version reached its project's review policy (§19), by the change `actor` made (a review, a comment
  // resolved, the policy itself): once each time it gets there, so a CI job can wait for this instead of polling.
  // Members were asked to review a version (§19): `userIds` the ones asked by this request.
  event('review.requested', { fileId: id, seriesId: id, cutId: id, name: z.string(), version: count, userIds: z.array(id) }),
  event('review.gate_passed', { fileId: id, seriesId: id, cutId: id, name: z.string(), version: count, review: reviewSummary, policy: reviewPolicy }),
]);

export const helloMessage = z.object({ type: z.literal('hello'), userId: id, projectIds: z.array(id) });

export type ProjectEvent = z.output<typeof projectEvent>;
export type EventType = ProjectEvent['type'];
/** The `data` of one event type. */
export type EventData<Type extends EventType> = Extract<ProjectEvent, { type: Type }>['data'];
export type HelloMessage = z.output<typeof helloMessage>;

/** The records by the name the API description gives them (`components.schemas`). */
export const RECORD_SCHEMAS = {
  Problem: problem,
  Deleted: deleted,
  TrashItem: trashItem,
  RestoredTrash: restoredTrash,
  PurgedTrash: purgedTrash,
  User: user,
  Me: me,
  TokenPair: tokenPair,
  AuthResult: authResult,
  OkResult: okResult,
  PasswordChangeResult: passwordChangeResult,
  PersonalAccessToken: personalAccessToken,
  CreatedPersonalAccessToken: createdPersonalAccessToken,
  UserRef: userRef,
  Project: project,
  UpdatedProject: updatedProject,
  ProjectDetail: projectDetail,
  Member: member,
  Invitation: invitation,
  InviteResult: inviteResult,
  InvitationView: invitationView,
  AcceptedInvitation: acceptedInvitation,
  Vibe: vibe,
  VibeWithCuts: vibeWithCuts,
  Cut: cut,
  CutWithFiles: cutWithFiles,
  Comment: comment,
  CommentPage: commentPage,
  Review: review,
  ReviewList: reviewList,
  WithdrawnReview: withdrawnReview,
  RequestedReview: requestedReview,
  ReviewRequestsResult: reviewRequestsResult,
  NotificationPreferences: notificationPreferences,
  ReorderVibesResult: reorderVibesResult,
  File: fileRecord,
  FileSeries: fileSeries,
  FileVersions: fileVersions,
  DeletedSeries: deletedSeries,
  DeleteFileResult: deleteFileResult,
  ShareLink: shareLink,
  RevokeSharesResult: revokeSharesResult,
  SharedFile: sharedFile,
  SharedCutFile: sharedCutFile,
  SharedCut: sharedCut,
  SharedItem: sharedItem,
  ShareRecord: shareRecord,
  FeedbackLinkState: feedbackLinkState,
  SizeCount: sizeCount,
  StorageBreakdown: storageBreakdown,
  StorageQuota: storageQuota,
  StorageStats: storageStats,
  IncompleteUploads: incompleteUploads,
  AdminUser: adminUser,
  AdminUserActivation: adminUserActivation,
  UserStorage: userStorage,
  ProjectStorage: projectStorage,
  LargestFile: largestFile,
  AdminStorage: adminStorage,
  JobCount: jobCount,
  FailedJob: failedJob,
  AdminJobs: adminJobs,
  RetriedJob: retriedJob,
  Webhook: webhook,
  CreatedWebhook: createdWebhook,
  WebhookAttempt: webhookAttempt,
  WebhookDelivery: webhookDelivery,
  WebhookDeliveryPage: webhookDeliveryPage,
  ProjectEvent: projectEvent,
  HelloMessage: helloMessage,
  Health: health,
  AudioInfo: audioInfo,
  PreviewInfo: previewInfo,
  Loudness: loudness,
  StemEntry: stemEntry,
  StemsSummary: stemsSummary,
  Stems: stems,
  StemEntriesPage: stemEntriesPage,
  Waveform: waveform,
} as const;
