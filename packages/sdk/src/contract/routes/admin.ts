// What a site ADMIN sees and does: storage, accounts, background jobs.
import { z } from 'zod';
import { jobKind, jobState } from '../records.js';
import { declareRoutes } from '../route-types.js';

/** `GET /api/admin/storage`: one row per user or per project, and the `top` largest files. */
const adminStorageQuery = z.object({
  by: z.enum(['user', 'project'], { error: 'must be user or project' }),
  top: z.coerce.number({ error: 'must be a number' }).int('must be an integer').min(1, 'must be 1 to 1000').max(1000, 'must be 1 to 1000').optional(),
});

/** `GET /api/admin/jobs`: the counts of one state or kind only. */
const adminJobsQuery = z.object({
  state: jobState.optional(),
  kind: jobKind.optional(),
});

// What a client sends (before the server's coercion).
export type AdminStorageQuery = z.input<typeof adminStorageQuery>;
export type AdminJobsQuery = z.input<typeof adminJobsQuery>;

export const ADMIN_ROUTES = declareRoutes({
  adminStorage: {
    method: 'GET',
    path: '/api/admin/storage',
    auth: 'read',
    query: adminStorageQuery,
    response: 'AdminStorage',
    status: 200,
    errors: ['VALIDATION_FAILED', 'FORBIDDEN'],
    errorNotes: {
      403: 'FORBIDDEN: the caller is not a site ADMIN; INSUFFICIENT_SCOPE: a personal access token limited to projects',
    },
    tag: 'admin',
    summary: "Site ADMIN: every user's or every project's bytes by type, quota use and incomplete uploads; the largest files",
    description: 'by=user: one row per account (files and images it uploaded, its quota, its incomplete resumable uploads), deactivated ones too; by=project: one row per project (every member\'s files, its cover and vibe images, the incomplete uploads into its cuts). Rows are ordered by totalSize, largest first. top=N (1–1000) adds the N largest files of the site. Sums are exact (counted as bigint, answered as JSON numbers).',
  },
  adminListUsers: {
    method: 'GET',
    path: '/api/admin/users',
    auth: 'read',
    response: 'AdminUser[]',
    status: 200,
    errors: ['FORBIDDEN'],
    errorNotes: {
      403: 'FORBIDDEN: the caller is not a site ADMIN; INSUFFICIENT_SCOPE: a personal access token limited to projects',
    },
    tag: 'admin',
    summary: 'Site ADMIN: every account, by email, with its role, whether it is active and when it last signed in',
  },
  adminSetUserActive: {
    method: 'PUT',
    path: '/api/admin/users/:id/active',
    auth: 'write',
    params: { id: 'User' },
    request: 'SetUserActiveRequest',
    response: 'AdminUserActivation',
    status: 200,
    errors: ['FORBIDDEN'],
    errorNotes: {
      403: 'FORBIDDEN: the caller is not a site ADMIN, or deactivates their own account; INSUFFICIENT_SCOPE: a read token, or a personal access token limited to projects',
    },
    tag: 'admin',
    summary: 'Site ADMIN: deactivate an account (active: false) or activate it again (active: true)',
    description: 'A deactivated account cannot sign in: a login with its right password is 403 FORBIDDEN (detail: the account is deactivated) (a wrong one stays 401 INVALID_CREDENTIALS), as is redeeming a command-line code; the identity provider lands with ?authError=account_deactivated. Its sessions, refresh tokens and personal access tokens end at once (their WebSocket connections close with 4401); activating it again does not bring them back. Its share links are suspended while it is deactivated (404 like an unknown link, comments through them too) and serve again once it is active: the answer lists them (shareLinks). Its files, images, projects and memberships stay. Idempotent; a site ADMIN cannot deactivate their own account.',
  },
  adminJobs: {
    method: 'GET',
    path: '/api/admin/jobs',
    auth: 'read',
    query: adminJobsQuery,
    response: 'AdminJobs',
    status: 200,
    errors: ['VALIDATION_FAILED', 'FORBIDDEN'],
    errorNotes: {
      403: 'FORBIDDEN: the caller is not a site ADMIN; INSUFFICIENT_SCOPE: a personal access token limited to projects',
    },
    tag: 'admin',
    summary: 'Site ADMIN: the background job queue: jobs by kind and state, the oldest waiting, the last 100 failed with their errors',
    description: 'state= and kind= narrow the counts (and the failed list) to one state or one kind. A job is tried maxAttempts times with exponential backoff and jitter, then failed (dead); failed jobs are kept 30 days, done ones a day. oldestQueuedSeconds is how long the oldest job that is due has waited (with kind=, of that kind).',
  },
  adminRetryJob: {
    method: 'POST',
    path: '/api/admin/jobs/:id/retry',
    auth: 'write',
    params: { id: 'Job' },
    response: 'RetriedJob',
    status: 200,
    errors: ['FORBIDDEN', 'JOB_NOT_FAILED'],
    errorNotes: {
      403: 'FORBIDDEN: the caller is not a site ADMIN; INSUFFICIENT_SCOPE: a read token, or a personal access token limited to projects',
      409: 'JOB_NOT_FAILED: the job is queued, running or done (only a failed job is retried), or another job with its key is queued or running',
    },
    tag: 'admin',
    summary: 'Site ADMIN: run a failed job again, with its attempts renewed',
    description: 'The job is queued at once (state queued) with its attempts at zero, and any instance takes it as it would a new one.',
  },
});
