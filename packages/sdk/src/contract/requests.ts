import { z } from 'zod';
import { notificationPreferencesChange, reviewRequestsRequest } from './notifications.js';
import { createCommentRequest, guestCommentRequest, reviewPolicyChange, reviewRequest, updateCommentRequest } from './comments.js';
import { checkFilePath } from './file-paths.js';
import { webhookFormat } from './records.js';
import { describeSize, extensionsOf, MAX_UPLOAD_BYTES } from './file-types.js';
import {
  clearImageField,
  emailSchema,
  fileNameSchema,
  inviteTokenSchema,
  nameSchema,
  optionalDescription,
  roleSchema,
  tokenScopeSchema,
  uuidSchema,
} from './fields.js';

// ---- accounts (§3)

const passwordSchema = z
  .string({ error: 'must be a string' })
  .min(8, 'must be at least 8 characters')
  .max(1024, 'must be at most 1024 characters');

export const registerRequest = z.object({
  email: emailSchema,
  password: passwordSchema,
  name: nameSchema,
  /** The token of an invitation to the same email: registers and accepts it in one step. */
  inviteToken: inviteTokenSchema.optional(),
});

export const loginRequest = z.object({
  email: emailSchema,
  password: z.string({ error: 'must be a string' }).max(1024, 'must be at most 1024 characters'),
  rememberMe: z.boolean({ error: 'must be a boolean' }).optional().default(false),
});

/** `POST /api/auth/password/forgot`: the email a reset link goes to, if it has an account. */
export const forgotPasswordRequest = z.object({ email: emailSchema });

/** `POST /api/auth/password/reset`: the emailed link's token and the new password. */
export const resetPasswordRequest = z.object({
  token: z.string({ error: 'must be a string' }).min(1, 'is required').max(200, 'must be at most 200 characters'),
  newPassword: passwordSchema,
});

/** `PUT /api/auth/me`: the caller's display name. */
export const updateMeRequest = z.object({ name: nameSchema });

/** `POST /api/auth/password`: `currentPassword` may be left out only by an account that has no password yet (IdP). */
export const changePasswordRequest = z.object({
  currentPassword: z.string({ error: 'must be a string' }).max(1024, 'must be at most 1024 characters').optional(),
  newPassword: passwordSchema,
  revokeTokens: z
    .boolean({ error: 'must be a boolean' })
    .optional()
    .default(false)
    .meta({ description: "true: also revoke every personal access token of the account (they do not end with a password change otherwise)" }),
});

/** `DELETE /api/auth/me`: the password, or for an account without one its email as confirmation. */
export const deleteAccountRequest = z.object({
  password: z.string({ error: 'must be a string' }).max(1024, 'must be at most 1024 characters').optional(),
  confirm: z.string({ error: 'must be a string' }).max(320, 'must be at most 320 characters').optional(),
});

/** `POST /api/auth/refresh` and `/logout`: the refresh token, unless the cookie carries it. */
export const refreshRequest = z.object({ refreshToken: z.string({ error: 'must be a string' }).min(1).optional() });

/** `POST /api/auth/idp/exchange` and `/link`: the one-time code of a command-line IdP flow and its loopback redirect. */
export const idpExchangeRequest = z.object({
  code: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(512, 'must be at most 512 characters'),
  redirectUri: z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(2048, 'must be at most 2048 characters')
    .meta({ format: 'uri' }),
  // Optional so that a missing verifier, like a wrong one, uses the code up (RFC 7636: 43–128 characters).
  codeVerifier: z.string({ error: 'must be a string' }).max(128, 'must be at most 128 characters').optional(),
});

// ---- personal access tokens (§11)

export const createTokenRequest = z.object({
  name: nameSchema,
  scope: tokenScopeSchema,
  projectIds: z
    .array(uuidSchema, { error: 'must be an array of project ids' })
    .min(1, 'must not be empty (leave it out for every project)')
    .max(100, 'must be at most 100 projects')
    .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an id')
    .optional()
    .meta({ description: 'Left out: every project of the owner. Each must be a project the caller is a member of (else 404)' }),
  expiresIn: z
    .number({ error: 'must be a whole number of seconds' })
    .int('must be a whole number of seconds')
    .min(3600, 'must be at least 3600 seconds (1 hour)')
    .max(31_622_400, 'must be at most 31,622,400 seconds (366 days)')
    .meta({ description: 'Seconds until the token expires: required, tokens always expire' }),
});

// ---- projects, members, invitations (§4)

export const createProjectRequest = z.object({ name: nameSchema, description: optionalDescription });

export const updateProjectRequest = z.object({
  name: nameSchema.optional(),
  description: optionalDescription,
  image: clearImageField,
  reviewPolicy: reviewPolicyChange.optional().meta({ description: 'JSON bodies only (a multipart form has no object fields)' }),
});

export const updateMemberRequest = z.object({ role: roleSchema });

export const inviteRequest = z.object({ email: emailSchema, role: roleSchema });

export const acceptInvitationRequest = z.object({ token: inviteTokenSchema });

// ---- vibes and cuts (§5)

export const createVibeRequest = z.object({ name: nameSchema });

export const updateVibeRequest = z.object({ name: nameSchema.optional(), image: clearImageField });

export const reorderVibesRequest = z.object({
  vibeIds: z
    .array(uuidSchema, { error: 'must be an array of vibe ids' })
    .min(1, 'must not be empty')
    .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an id'),
});

/** Creating and renaming a cut. */
export const cutNameRequest = z.object({ name: nameSchema });

export const moveCutRequest = z.object({ targetVibeId: uuidSchema });

// ---- files and shares (§6)

/** A file's path (§16): checked and NFC-normalised; an empty one is refused (not taken as absent). */
export const filePathSchema = z.string().transform((raw, ctx) => {
  const checked = checkFilePath(raw);
  if ('problem' in checked) {
    ctx.addIssue({ code: 'custom', message: checked.problem });
    return z.NEVER;
  }
  return checked.path;
});

/** The text fields of a multipart upload. */
const uploadFieldsShape = {
  cutId: uuidSchema.optional().meta({ description: "The cut; may be left out with versionOf (given, it must be the series' cut)" }),
  versionOf: uuidSchema.optional().meta({
    description: 'Any file of a series: the upload becomes its next version (same cut, same type; else 400 naming versionOf). Send it before the file part.',
  }),
  name: nameSchema.optional().meta({ description: "Display name; default the latest version's (with versionOf), else the file name without path" }),
  path: filePathSchema.optional().meta({
    description:
      "The file's relative POSIX path in the cut's folder (§16), NFC-normalised by the server, never a reserved path (a .git, .hg, .svn or .band segment, " +
      "the top-level .bandignore, a Windows device name, a segment ending in . or a space, a :); unique case-insensitively among the latest " +
      'versions of the cut (a taken path: 409 PATH_TAKEN unless versionOf names its series). With versionOf: another path renames the ' +
      "series, none keeps its path. With a path, any extension no type claims is a SESSION file. Send it before the file part.",
  }),
};

/** An upload names its cut, or the series it is the next version of. */
const cutOrSeries = (value: { cutId?: string; versionOf?: string }, ctx: z.RefinementCtx) => {
  if (value.cutId === undefined && value.versionOf === undefined) ctx.addIssue({ code: 'custom', path: ['cutId'], message: 'is required (or versionOf)' });
};

export const uploadFields = z.object(uploadFieldsShape).superRefine(cutOrSeries);

/** The `Upload-Metadata` of a resumable upload's creation (tus): the multipart fields, and the file's name. */
export const resumableUploadMetadata = z.object({ ...uploadFieldsShape, filename: fileNameSchema }).superRefine(cutOrSeries);

export const shareRequest = z.object({
  expiresIn: z
    .number({ error: 'must be a whole number of seconds' })
    .int('must be a whole number of seconds')
    .min(60, 'must be at least 60 seconds')
    .max(31_536_000, 'must be at most 31,536,000 seconds (365 days)')
    .nullable()
    .optional()
    .meta({ description: 'Seconds; absent or null: the link does not expire' }),
  follow: z
    .enum(['this', 'latest'], { error: 'must be this or latest' })
    .optional()
    .meta({ description: 'A file link only: "this" (default) serves this version; "latest" the newest version of its series at each access' }),
  allowComments: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .meta({ description: 'A file link only: a feedback link, where whoever holds it may comment without an account' }),
  reuse: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .meta({
      description:
        "Hand out again the caller's live link of this file or cut that an earlier request with reuse made with the same follow and allowComments (its expiry moves to the later of the two), instead of making another; without one, a new link that a later request with reuse finds",
    }),
  download: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .meta({ description: 'false: a stream-only link, serving the preview and the page but answering 403 DOWNLOAD_DISABLED to the original and the archive (default true)' }),
});

// ---- multipart forms: the text fields of the JSON bodies above, plus the binary part the server streams

const imagePart = z
  .file()
  .meta({
    description:
      `JPEG, PNG, GIF or WebP, at most ${describeSize(MAX_UPLOAD_BYTES.IMAGE)}, checked by its leading bytes. A file name extension, when there is one, must be ` +
      `the image's (${extensionsOf('IMAGE').map((extension) => `.${extension}`).join(' ')}); a part without one (a Blob sent as "blob") is typed by its leading bytes.`,
  })
  .optional();

export const createProjectForm = createProjectRequest.extend({ image: imagePart });
export const updateProjectForm = updateProjectRequest.omit({ reviewPolicy: true }).extend({ image: imagePart });
export const createVibeForm = createVibeRequest.extend({ image: imagePart });
export const updateVibeForm = updateVibeRequest.extend({ image: imagePart });
export const avatarForm = z.object({ image: imagePart.unwrap() });
/** The file part is last: when cutId precedes it, access is checked before any byte is stored. */
export const uploadForm = z.object({
  ...uploadFieldsShape,
  file: z.file().meta({ description: 'Typed by its name extension (the file type table), then checked by its leading bytes; with a path, any other extension is a SESSION file, whose bytes are not checked' }),
});

// ---- webhooks (§19)

const webhookUrl = z.url({ error: 'must be an http(s) URL', protocol: /^https?$/ }).max(2048, 'must be at most 2048 characters');
const webhookEvents = z
  .array(z.string().regex(/^(\*|[a-z_]+\.\*|[a-z_]+\.[a-z_]+)$/, 'must be event types, `prefix.*` or `*`'), { error: 'must be an array of event types' })
  .min(1, 'must name at least one event type (or `*`)')
  .max(100, 'must be at most 100 entries');
const webhookDescription = z
  .string({ error: 'must be a string' })
  .trim()
  .max(500, 'must be at most 500 characters')
  .refine((value) => !value.includes('\u0000'), 'must not contain NUL characters');
export const createWebhookRequest = z.object({
  url: webhookUrl,
  events: webhookEvents,
  description: webhookDescription.optional(),
  format: webhookFormat.optional(),
});
export const updateWebhookRequest = z.object({
  url: webhookUrl.optional(),
  events: webhookEvents.optional(),
  enabled: z.boolean({ error: 'must be true or false' }).optional(),
  description: webhookDescription.nullable().optional(),
});

export const setUserActiveRequest = z.object({ active: z.boolean({ error: 'must be true or false' }) });

// What a client sends (before the server's trimming, lower-casing and defaults).
export type SetUserActiveRequest = z.input<typeof setUserActiveRequest>;
export type CreateWebhookRequest = z.input<typeof createWebhookRequest>;
export type UpdateWebhookRequest = z.input<typeof updateWebhookRequest>;
export type RegisterRequest = z.input<typeof registerRequest>;
export type LoginRequest = z.input<typeof loginRequest>;
export type RefreshRequest = z.input<typeof refreshRequest>;
export type LogoutRequest = z.input<typeof refreshRequest>;
export type IdpExchangeRequest = z.input<typeof idpExchangeRequest>;
export type UpdateMeRequest = z.input<typeof updateMeRequest>;
export type ChangePasswordRequest = z.input<typeof changePasswordRequest>;
export type ForgotPasswordRequest = z.input<typeof forgotPasswordRequest>;
export type ResetPasswordRequest = z.input<typeof resetPasswordRequest>;
export type DeleteAccountRequest = z.input<typeof deleteAccountRequest>;
export type CreateTokenRequest = z.input<typeof createTokenRequest>;
export type CreateProjectRequest = z.input<typeof createProjectRequest>;
export type UpdateProjectRequest = z.input<typeof updateProjectRequest>;
export type UpdateMemberRequest = z.input<typeof updateMemberRequest>;
export type InviteRequest = z.input<typeof inviteRequest>;
export type AcceptInvitationRequest = z.input<typeof acceptInvitationRequest>;
export type CreateVibeRequest = z.input<typeof createVibeRequest>;
export type UpdateVibeRequest = z.input<typeof updateVibeRequest>;
export type ReorderVibesRequest = z.input<typeof reorderVibesRequest>;
export type CreateCutRequest = z.input<typeof cutNameRequest>;
export type UpdateCutRequest = z.input<typeof cutNameRequest>;
export type MoveCutRequest = z.input<typeof moveCutRequest>;
export type ShareRequest = z.input<typeof shareRequest>;
export type UploadFields = z.input<typeof uploadFields>;

/** The request bodies by the name the API description gives them (`components.schemas`). */
export const REQUEST_SCHEMAS = {
  RegisterRequest: registerRequest,
  LoginRequest: loginRequest,
  RefreshRequest: refreshRequest,
  IdpExchangeRequest: idpExchangeRequest,
  UpdateMeRequest: updateMeRequest,
  ChangePasswordRequest: changePasswordRequest,
  ForgotPasswordRequest: forgotPasswordRequest,
  ResetPasswordRequest: resetPasswordRequest,
  DeleteAccountRequest: deleteAccountRequest,
  CreateTokenRequest: createTokenRequest,
  CreateWebhookRequest: createWebhookRequest,
  UpdateWebhookRequest: updateWebhookRequest,
  CreateProjectRequest: createProjectRequest,
  UpdateProjectRequest: updateProjectRequest,
  UpdateMemberRequest: updateMemberRequest,
  InviteRequest: inviteRequest,
  AcceptInvitationRequest: acceptInvitationRequest,
  CreateVibeRequest: createVibeRequest,
  UpdateVibeRequest: updateVibeRequest,
  ReorderVibesRequest: reorderVibesRequest,
  CutNameRequest: cutNameRequest,
  MoveCutRequest: moveCutRequest,
  ShareRequest: shareRequest,
  CreateCommentRequest: createCommentRequest,
  UpdateCommentRequest: updateCommentRequest,
  GuestCommentRequest: guestCommentRequest,
  ReviewRequest: reviewRequest,
  ReviewRequestsRequest: reviewRequestsRequest,
  NotificationPreferencesChange: notificationPreferencesChange,
  SetUserActiveRequest: setUserActiveRequest,
} as const;

/** The multipart/form-data bodies by the name the API description gives them. */
export const FORM_SCHEMAS = {
  CreateProjectForm: createProjectForm,
  UpdateProjectForm: updateProjectForm,
  CreateVibeForm: createVibeForm,
  UpdateVibeForm: updateVibeForm,
  UploadForm: uploadForm,
  AvatarForm: avatarForm,
} as const;
