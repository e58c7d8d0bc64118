import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

/** An active link: its file and when it stops working (null: never). */
export interface ActiveShare {
  fileId: string;
  expiresAt: Date | null;
}

@injectable()
export class SharesRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  async insert(tx: Queryable, link: { tokenHash: string; fileId: string; expiresAt: Date | null; createdBy: string }): Promise<void> {
    await tx`insert into share_links ${tx(link)}`;
  }

  /** Deletes every link of a file; answers how many there were. */
  async revokeAll(tx: Queryable, fileId: string): Promise<number> {
    const result = await tx`delete from share_links where file_id = ${fileId}`;
    return result.count;
  }

  /** The link with this token hash, unless it has expired (links of deleted files go with them). */
  async findActive(tokenHash: string): Promise<ActiveShare | null> {
    const [row] = await this.sql<ActiveShare[]>`
      select file_id, expires_at from share_links
      where token_hash = ${tokenHash} and (expires_at is null or expires_at > now())`;
    return row ?? null;
  }
}
