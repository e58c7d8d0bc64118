import type { BandPromise } from '../band-promise.js';
import { ROUTES } from '../contract/routes.js';
import type { RequestOptions, Transport } from '../transport.js';
import type { AdminJobs, AdminJobsQuery, AdminStorage, AdminUser, AdminUserActivation, RetriedJob } from '../types.js';

/** What `storage` asks for: one row per user or per project, and (`top`, 1–1000) the site's largest files. */
export interface AdminStorageOptions {
  by: 'user' | 'project';
  top?: number;
}

/**
 * Site administration, for a site ADMIN only (403 FORBIDDEN for others; 403 INSUFFICIENT_SCOPE on a personal
 * access token limited to projects).
 */
export class AdminResource {
  constructor(private readonly transport: Transport) {}

  /** Every user's or project's bytes by type, quota use and incomplete uploads, most bytes first. */
  storage(options: AdminStorageOptions, requestOptions?: RequestOptions): BandPromise<AdminStorage> {
    return this.transport.call(ROUTES.adminStorage, { query: { by: options.by, top: options.top } }, requestOptions);
  }

  /** Every account, by email. */
  users(options?: RequestOptions): BandPromise<AdminUser[]> {
    return this.transport.call(ROUTES.adminListUsers, {}, options);
  }

  /**
   * Deactivates an account (it cannot sign in; its sessions and tokens end at once; its share links are suspended;
   * its files stay) or activates it again (its share links serve again); the answer lists those links.
   */
  setActive(userId: string, active: boolean, options?: RequestOptions): BandPromise<AdminUserActivation> {
    return this.transport.call(ROUTES.adminSetUserActive, { params: { id: userId }, json: { active } }, options);
  }

  /** The background job queue: jobs by kind and state, the oldest waiting, the last 100 failed with their errors. */
  jobs(filter: AdminJobsQuery = {}, options?: RequestOptions): BandPromise<AdminJobs> {
    return this.transport.call(ROUTES.adminJobs, { query: { state: filter.state, kind: filter.kind } }, options);
  }

  /** Runs a failed job again, its attempts renewed (409 JOB_NOT_FAILED for any other job). */
  retryJob(jobId: string, options?: RequestOptions): BandPromise<RetriedJob> {
    return this.transport.call(ROUTES.adminRetryJob, { params: { id: jobId } }, options);
  }
}
