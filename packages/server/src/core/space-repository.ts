import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from './database.js';
import { SQL } from './di.js';

/**
 * What the quota counts (trashed files too, until purged: §21, hence `public.files`): the bytes of the files and images each user uploaded, and the whole length of their
 * incomplete resumable uploads (held from creation on, as a multipart upload's Content-Length is).
 */
@injectable()
export class SpaceRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** The bytes `owner`'s uploads hold: files and images they uploaded, resumable uploads they have not finished. */
  async usedBytes(owner: string, tx: Queryable = this.sql): Promise<number> {
    const [row] = await tx<{ used: number }[]>`
      select ((select coalesce(sum(size), 0) from public.files where uploaded_by = ${owner})
            + (select coalesce(sum(size), 0) from stored_images where uploaded_by = ${owner})
            + (select coalesce(sum(length), 0) from resumable_uploads
               where owner_id = ${owner} and completed_at is null and expires_at > now()))::bigint as used`;
    return row!.used;
  }

  /** Serialises, until `tx` ends, the transactions that record uploads of `owner`. */
  async lockQuota(tx: Queryable, owner: string): Promise<void> {
    await tx`select pg_advisory_xact_lock(hashtext(${`quota:${owner}`}))`;
  }
}
