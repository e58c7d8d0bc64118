import type { FileType } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

export interface TypeUsage {
  type: FileType;
  size: number;
  count: number;
}

@injectable()
export class StorageRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Bytes and files per type: one uploader's, or (null) everyone's. Project covers, vibe images and avatars
   * (stored_images) are IMAGE uploads like an image file on a cut.
   */
  async usageByType(uploadedBy: string | null): Promise<TypeUsage[]> {
    const whose = uploadedBy === null ? this.sql`` : this.sql`where uploaded_by = ${uploadedBy}`;
    return this.sql<TypeUsage[]>`
      select type, sum(size)::bigint as size, count(*)::int as count from (
        select type, size from files ${whose}
        union all
        select 'IMAGE', size from stored_images ${whose}
      ) uploads
      group by type`;
  }

  async siteCounts(): Promise<{ userCount: number; projectCount: number }> {
    const [row] = await this.sql<{ userCount: number; projectCount: number }[]>`
      select (select count(*)::int from users) as user_count, (select count(*)::int from projects) as project_count`;
    return row!;
  }
}
