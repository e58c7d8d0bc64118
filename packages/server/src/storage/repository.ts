import type { FileType } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

export interface TypeUsage {
  /** PREVIEW: the listening previews of the CUT files counted (§20). */
  type: FileType | 'PREVIEW';
  size: number;
  count: number;
}

/** A file among the largest, with its project and uploader. */
export interface LargestFileRow {
  id: string;
  name: string;
  type: FileType;
  size: number;
  createdAt: Date;
  projectId: string;
  projectName: string;
  uploaderId: string | null;
  uploaderEmail: string | null;
}

@injectable()
export class StorageRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Bytes and files per type: one uploader's, or (null) everyone's. Project covers, vibe images and avatars
   * (stored_images) are IMAGE uploads like an image file on a cut. With `projectIds` (a token limited to
   * projects), only the uploader's files in those of them they still belong to, and those projects' covers
   * and vibe images: other projects do not exist for such a token, and an avatar belongs to no project.
   */
  async usageByType(uploadedBy: string | null, projectIds: string[] | null = null): Promise<TypeUsage[]> {
    if (uploadedBy !== null && projectIds !== null) return this.usageInProjects(uploadedBy, projectIds);
    const whose = uploadedBy === null ? this.sql`` : this.sql`where uploaded_by = ${uploadedBy}`;
    const previewed = uploadedBy === null ? this.sql`where preview_bytes is not null` : this.sql`where uploaded_by = ${uploadedBy} and preview_bytes is not null`;
    const entriesPreviewed =
      uploadedBy === null ? this.sql`where e.preview_bytes is not null` : this.sql`where f.uploaded_by = ${uploadedBy} and e.preview_bytes is not null`;
    return this.sql<TypeUsage[]>`
      select type, sum(size)::bigint as size, count(*)::int as count from (
        select type, size from public.files ${whose}
        union all
        select 'PREVIEW', preview_bytes from files ${previewed}
        union all
        select 'PREVIEW', e.preview_bytes from stem_entries e join files f on f.id = e.file_id ${entriesPreviewed}
        union all
        select 'IMAGE', size from stored_images ${whose}
      ) uploads
      group by type`;
  }

  /**
   * The `limit` largest files (every version; the trash's are left out, as `files` is the live view), largest
   * first: the site's, or one project's (`projectId`), of one type if given.
   */
  async largestFiles(limit: number, { projectId, type }: { projectId?: string; type?: FileType | undefined } = {}): Promise<LargestFileRow[]> {
    const inProject = projectId === undefined ? this.sql`` : this.sql`and f.project_id = ${projectId}`;
    const ofType = type === undefined ? this.sql`` : this.sql`and f.type = ${type}`;
    return this.sql<LargestFileRow[]>`
      select f.id, f.name, f.type, f.size, f.created_at, p.id as project_id, p.name as project_name,
             u.id as uploader_id, u.email as uploader_email
      from files f join projects p on p.id = f.project_id left join users u on u.id = f.uploaded_by
      where true ${inProject} ${ofType}
      order by f.size desc, f.id
      limit ${limit}`;
  }

  /** How many accounts store at least `bytes` (files and images, as the quota counts them). */
  async usersNearQuota(bytes: number): Promise<number> {
    const [row] = await this.sql<{ count: number }[]>`
      select count(*)::int as count from (
        select uploaded_by from (
          select uploaded_by, size from public.files where uploaded_by is not null
          union all
          select uploaded_by, size from stored_images where uploaded_by is not null
        ) uploads
        group by uploaded_by having sum(size) >= ${bytes}
      ) near`;
    return row!.count;
  }

  private async usageInProjects(uploadedBy: string, projectIds: string[]): Promise<TypeUsage[]> {
    return this.sql<TypeUsage[]>`
      with reached as (
        select project_id as id from project_members where user_id = ${uploadedBy} and project_id = any(${projectIds}::uuid[])
      )
      select type, sum(size)::bigint as size, count(*)::int as count from (
        select type, size from public.files where uploaded_by = ${uploadedBy} and project_id in (select id from reached)
        union all
        select 'PREVIEW', preview_bytes from files
        where uploaded_by = ${uploadedBy} and project_id in (select id from reached) and preview_bytes is not null
        union all
        select 'PREVIEW', e.preview_bytes from stem_entries e join files f on f.id = e.file_id
        where f.uploaded_by = ${uploadedBy} and f.project_id in (select id from reached) and e.preview_bytes is not null
        union all
        select 'IMAGE', s.size from stored_images s
        where s.uploaded_by = ${uploadedBy}
          and (exists (select 1 from public.projects p where p.image = s.name and p.id in (select id from reached))
               or exists (select 1 from public.vibes v where v.image = s.name and v.project_id in (select id from reached)))
      ) uploads
      group by type`;
  }

  async siteCounts(): Promise<{ userCount: number; projectCount: number }> {
    const [row] = await this.sql<{ userCount: number; projectCount: number }[]>`
      select (select count(*)::int from users) as user_count, (select count(*)::int from projects) as project_count`;
    return row!;
  }
}
