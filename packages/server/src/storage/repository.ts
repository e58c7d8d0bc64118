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

  /** Bytes and files per type: one uploader's, or (null) everyone's. An account's avatar counts as one of its images. */
  async usageByType(uploadedBy: string | null): Promise<TypeUsage[]> {
    return this.sql<TypeUsage[]>`
      select type, sum(size)::bigint as size, count(*)::int as count from (
        select type, size, uploaded_by from files
        union all
        select 'IMAGE', s.size, u.id from users u join stored_images s on s.name = u.avatar
      ) stored
      ${uploadedBy === null ? this.sql`` : this.sql`where uploaded_by = ${uploadedBy}`}
      group by type`;
  }

  async siteCounts(): Promise<{ userCount: number; projectCount: number }> {
    const [row] = await this.sql<{ userCount: number; projectCount: number }[]>`
      select (select count(*)::int from users) as user_count, (select count(*)::int from projects) as project_count`;
    return row!;
  }
}
