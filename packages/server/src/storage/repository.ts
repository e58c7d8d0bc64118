import type { FileType } from '@bandcollab/sdk';
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

  /** Bytes and files per type: one uploader's, or (null) everyone's. */
  async usageByType(uploadedBy: string | null): Promise<TypeUsage[]> {
    const rows = await this.sql<{ type: FileType; size: string; count: number }[]>`
      select type, sum(size)::text as size, count(*)::int as count from files
      ${uploadedBy === null ? this.sql`` : this.sql`where uploaded_by = ${uploadedBy}`}
      group by type`;
    return rows.map((row) => ({ type: row.type, size: Number(row.size), count: row.count }));
  }

  async siteCounts(): Promise<{ userCount: number; projectCount: number }> {
    const [row] = await this.sql<{ user_count: number; project_count: number }[]>`
      select (select count(*)::int from users) as user_count, (select count(*)::int from projects) as project_count`;
    return { userCount: row!.user_count, projectCount: row!.project_count };
  }
}
