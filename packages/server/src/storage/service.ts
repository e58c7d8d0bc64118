import type { FileType, LargestFile, StorageBreakdown, StorageQuota, StorageStats } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import { ProjectAccess } from '../core/project-access.js';
import { Space } from '../core/space.js';
import { type LargestFileRow, StorageRepository, type TypeUsage } from './repository.js';

/**
 * Where each type counts in a breakdown (§6; SESSION files under `other`, §16; the previews the server made of
 * CUT files, §20, under `previews`): also the site administration's.
 */
export const BREAKDOWN_KEY: Record<FileType | 'PREVIEW', keyof StorageBreakdown> = { CUT: 'audio', STEM: 'stems', IMAGE: 'images', SESSION: 'other', PREVIEW: 'previews' };

export const emptyBreakdown = (): StorageBreakdown => ({
  audio: { size: 0, count: 0 },
  stems: { size: 0, count: 0 },
  images: { size: 0, count: 0 },
  other: { size: 0, count: 0 },
  previews: { size: 0, count: 0 },
});

export const toLargestFile = (row: LargestFileRow): LargestFile => ({
  id: row.id,
  name: row.name,
  type: row.type,
  size: row.size,
  project: { id: row.projectId, name: row.projectName },
  uploadedBy: row.uploaderId === null ? null : { id: row.uploaderId, email: row.uploaderEmail! },
  createdAt: row.createdAt.toISOString(),
});

/** Totals and a per-type breakdown that always adds up to them. */
function summarize(usage: TypeUsage[]): Pick<StorageStats, 'totalSize' | 'fileCount' | 'breakdown'> {
  const breakdown = emptyBreakdown();
  for (const { type, size, count } of usage) breakdown[BREAKDOWN_KEY[type]] = { size, count };
  const parts = Object.values(breakdown);
  return {
    totalSize: parts.reduce((sum, part) => sum + part.size, 0),
    fileCount: parts.reduce((sum, part) => sum + part.count, 0),
    breakdown,
  };
}

/** What the user uploaded: everything counted but the server's previews. */
const uploaded = ({ totalSize, breakdown }: Pick<StorageStats, 'totalSize' | 'breakdown'>): number => totalSize - breakdown.previews.size;

@injectable()
export class StorageService {
  constructor(
    @inject(StorageRepository) private readonly repository: StorageRepository,
    @inject(Space) private readonly space: Space,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
  ) {}

  /** A project's largest files, for its members (a stranger: 404). */
  async largestFiles(principal: Principal, projectId: string, { limit, type }: { limit: number; type?: FileType | undefined }): Promise<LargestFile[]> {
    await this.access.require(principal, 'project', projectId);
    return (await this.repository.largestFiles(limit, { projectId, type })).map(toLargestFile);
  }

  /**
   * The caller's own uploads and quota; a site ADMIN also gets the `site` block over every user. A token
   * limited to projects counts only those projects and never gets the site block; its quota still shows the
   * account's use, which is what an upload with it is checked against.
   */
  async stats(principal: Principal): Promise<StorageStats> {
    const limitedTo = principal.token?.projectIds ?? null;
    const reached = summarize(await this.repository.usageByType(principal.userId, limitedTo));
    const own = { ...reached, quota: await this.quota(principal.userId, limitedTo === null ? uploaded(reached) : null) };
    if (principal.role !== 'ADMIN' || limitedTo !== null) return own;
    const site = summarize(await this.repository.usageByType(null));
    return { ...own, site: { ...site, ...(await this.repository.siteCounts()) } };
  }

  /**
   * The quota counts what the user uploaded for the whole account: the files and the stored images (covers,
   * avatars), not the previews the server made of them (`totalSize` less `previews`), as uploads are refused by
   * (core/space-repository.ts). `usedBytes` null: not counted yet (the stats covered only some projects).
   */
  private async quota(userId: string, usedBytes: number | null): Promise<StorageQuota | null> {
    const limitBytes = this.space.quotaBytes;
    if (limitBytes === null) return null;
    return { limitBytes, usedBytes: usedBytes ?? uploaded(summarize(await this.repository.usageByType(userId))) };
  }
}
