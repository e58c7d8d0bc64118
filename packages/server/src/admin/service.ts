import type { AccountShareLink, AdminJobs, AdminStorage, AdminUser, AdminUserActivation, IncompleteUploads, JobState, RetriedJob, StorageBreakdown } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { type Principal, requireEveryProject } from '../core/auth-guard.js';
import { type Sql, violatesUniqueIndex } from '../core/database.js';
import { SQL } from '../core/di.js';
import { DomainError, forbidden, notFound } from '../core/errors.js';
import type { JobKindName } from '../core/job-kinds.js';
import { JobsRepository } from '../core/jobs-repository.js';
import { PersonalAccessTokenCache } from '../core/personal-access-token-cache.js';
import { SessionCache } from '../core/session-cache.js';
import { Space } from '../core/space.js';
import { StorageRepository } from '../storage/repository.js';
import { BREAKDOWN_KEY, emptyBreakdown, toLargestFile } from '../storage/service.js';
import { TokensRepository } from '../tokens/repository.js';
import { type AccountRow, AdminRepository, type OwnedIncompleteUploads, type OwnedUsage } from './repository.js';

const NO_INCOMPLETE_UPLOADS: IncompleteUploads = { count: 0, receivedBytes: 0, lengthBytes: 0 };

export const toAdminUser = (row: AccountRow): AdminUser => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role,
  active: row.deactivatedAt === null,
  createdAt: row.createdAt.toISOString(),
  deactivatedAt: row.deactivatedAt?.toISOString() ?? null,
  lastSignInAt: row.lastSignInAt?.toISOString() ?? null,
});

/** Totals and the per-type breakdown of each owner (user or project), adding up as the caller's statistics do. */
function summarizeByOwner(usage: OwnedUsage[]): Map<string, { totalSize: number; fileCount: number; breakdown: StorageBreakdown }> {
  const owners = new Map<string, { totalSize: number; fileCount: number; breakdown: StorageBreakdown }>();
  for (const { ownerId, type, size, count } of usage) {
    let owner = owners.get(ownerId);
    if (!owner) {
      owner = { totalSize: 0, fileCount: 0, breakdown: emptyBreakdown() };
      owners.set(ownerId, owner);
    }
    owner.breakdown[BREAKDOWN_KEY[type]] = { size, count };
    owner.totalSize += size;
    owner.fileCount += count;
  }
  return owners;
}

const EMPTY_USAGE = () => ({ totalSize: 0, fileCount: 0, breakdown: emptyBreakdown() });

const byOwner = (rows: OwnedIncompleteUploads[]) => new Map(rows.map(({ ownerId, ...uploads }) => [ownerId, uploads]));

/**
 * The site ADMIN's view of every account and project, and deactivation. Only a site ADMIN, on a session or a
 * token that is not limited to projects (such a token sees only its projects; the site is beyond them).
 */
@injectable()
export class AdminService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(AdminRepository) private readonly repository: AdminRepository,
    // The caches, so this instance refuses the ended sessions and tokens at once (the others when the notices
    // arrive); in a server command, which listens to none, they only pass the revocation on.
    @inject(SessionCache) private readonly sessions: Pick<SessionCache, 'revokeAllOfUser'>,
    @inject(TokensRepository) private readonly tokens: TokensRepository,
    @inject(PersonalAccessTokenCache) private readonly tokenCache: Pick<PersonalAccessTokenCache, 'forgetAllOf'>,
    @inject(Space) private readonly space: Pick<Space, 'quotaBytes'>,
    @inject(StorageRepository) private readonly storageRepository: StorageRepository,
  ) {}

  /** 403 INSUFFICIENT_SCOPE for a token limited to projects, then 403 FORBIDDEN for anyone but a site ADMIN. */
  authorize(principal: Principal): void {
    requireSiteAdmin(principal);
  }

  async storage(principal: Principal, query: { by: 'user' | 'project'; top?: number | undefined }): Promise<AdminStorage> {
    requireSiteAdmin(principal);
    return this.siteStorage(query);
  }

  async users(principal: Principal): Promise<AdminUser[]> {
    requireSiteAdmin(principal);
    return (await this.repository.accounts()).map(toAdminUser);
  }

  async setActive(principal: Principal, userId: string, active: boolean): Promise<AdminUserActivation> {
    requireSiteAdmin(principal);
    if (!active && userId === principal.userId) throw forbidden('A site ADMIN cannot deactivate their own account');
    const changed = await this.setActiveUnchecked(userId, active);
    if (!changed) throw notFound('User');
    return { ...changed.user, shareLinks: changed.shareLinks };
  }

  /** Storage by user or project, for the caller that is already known to be the site's administrator (the server commands). */
  async siteStorage({ by, top }: { by: 'user' | 'project'; top?: number | undefined }): Promise<AdminStorage> {
    const largestFiles = top === undefined ? [] : (await this.storageRepository.largestFiles(top)).map(toLargestFile);
    const largestFirst = <T extends { totalSize: number }>(rows: T[]) => rows.sort((a, b) => b.totalSize - a.totalSize);
    if (by === 'user') {
      const [accounts, usage, incomplete] = await Promise.all([this.repository.accounts(), this.repository.usageByUser(), this.repository.incompleteUploadsByUser()]);
      const usageOf = summarizeByOwner(usage);
      const incompleteOf = byOwner(incomplete);
      const limitBytes = this.space.quotaBytes;
      const users = accounts.map((account) => {
        const used = usageOf.get(account.id) ?? EMPTY_USAGE();
        return {
          user: toAdminUser(account),
          ...used,
          quota: limitBytes === null ? null : { limitBytes, usedBytes: used.totalSize },
          incompleteUploads: incompleteOf.get(account.id) ?? NO_INCOMPLETE_UPLOADS,
        };
      });
      return { by, users: largestFirst(users), largestFiles };
    }
    const [projects, usage, incomplete] = await Promise.all([this.repository.projects(), this.repository.usageByProject(), this.repository.incompleteUploadsByProject()]);
    const usageOf = summarizeByOwner(usage);
    const incompleteOf = byOwner(incomplete);
    const rows = projects.map((project) => ({
      project,
      ...(usageOf.get(project.id) ?? EMPTY_USAGE()),
      incompleteUploads: incompleteOf.get(project.id) ?? NO_INCOMPLETE_UPLOADS,
    }));
    return { by, projects: largestFirst(rows), largestFiles };
  }

  /**
   * Deactivating ends every session (and with it its refresh tokens) and personal access token in the same
   * transaction: running servers close their WebSockets (4401) when it commits. Its share links are suspended
   * while the account is deactivated (ShareRepository.findActive reads the account's state, so nothing is
   * rewritten and activating serves them again); `shareLinks` names them either way. Files, projects and
   * memberships stay. Activating again restores the ability to sign in and the links, nothing else. Null: no such user.
   */
  async setActiveUnchecked(userId: string, active: boolean): Promise<{ user: AdminUser; revokedTokens: number; shareLinks: AccountShareLink[] } | null> {
    const changed = await this.sql.begin(async (tx) => {
      const row = await this.repository.setActive(tx, userId, active);
      if (!row) return null;
      let revokedTokens = 0;
      if (!active) {
        await this.sessions.revokeAllOfUser(tx, userId);
        revokedTokens = await this.tokens.deleteAllOf(tx, userId);
      }
      const shareLinks = (await this.repository.liveShareLinks(tx, userId)).map((link) => ({
        ...link,
        createdAt: link.createdAt.toISOString(),
        expiresAt: link.expiresAt?.toISOString() ?? null,
      }));
      return { user: toAdminUser(row), revokedTokens, shareLinks };
    });
    if (changed !== null && changed.revokedTokens > 0) this.tokenCache.forgetAllOf(userId);
    return changed;
  }
}

/** 403 INSUFFICIENT_SCOPE for a token limited to projects, then 403 FORBIDDEN for anyone but a site ADMIN. */
function requireSiteAdmin(principal: Principal): void {
  requireEveryProject(principal, 'administer the site');
  if (principal.role !== 'ADMIN') throw forbidden('Only a site ADMIN may do this');
}

/** The job queue's admin view (§18) and the retry of a failed job: a site ADMIN's, or the `jobs` server command's. */
@injectable()
export class AdminJobsService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(JobsRepository) private readonly jobs: JobsRepository,
  ) {}

  /** `principal` null: the server command's caller, the site's administrator already. */
  async overview(principal: Principal | null, filter: { state?: JobState | undefined; kind?: JobKindName | undefined }): Promise<AdminJobs> {
    if (principal) requireSiteAdmin(principal);
    const { failed, ...overview } = await this.jobs.overview(filter);
    return {
      ...overview,
      failed: failed.map((job) => ({ ...job, createdAt: job.createdAt.toISOString(), finishedAt: job.finishedAt?.toISOString() ?? null })),
    };
  }

  /** 404 when there is no such job, 409 JOB_NOT_FAILED when it is not failed or its key is live again. */
  async retry(principal: Principal | null, id: string): Promise<RetriedJob> {
    if (principal) requireSiteAdmin(principal);
    let outcome;
    try {
      outcome = await this.sql.begin((tx) => this.jobs.retry(tx, id));
    } catch (error) {
      if (violatesUniqueIndex(error, 'jobs_live_key')) throw new DomainError('JOB_NOT_FAILED', 'Another job for the same work is queued or running');
      throw error;
    }
    if (!outcome) throw notFound('Job');
    if (!outcome.retried) throw new DomainError('JOB_NOT_FAILED', `The job is ${outcome.state}: only a failed job is retried`);
    return { id, state: outcome.state };
  }
}
