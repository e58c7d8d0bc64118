import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

/** A `resumable_uploads` row. */
export interface UploadRow {
  id: string;
  ownerId: string;
  cutId: string;
  fileName: string;
  displayName: string | null;
  extension: string;
  length: number;
  received: number;
  fileId: string | null;
  completedAt: Date | null;
  expiresAt: Date;
}

export type NewUpload = Pick<UploadRow, 'id' | 'ownerId' | 'cutId' | 'fileName' | 'displayName' | 'extension' | 'length'>;

/** A PATCH holds its upload's lock on a connection of its own: PostgreSQL frees it if this process dies. */
export interface UploadLock {
  release(): Promise<void>;
}

/** The first key of the two-key advisory locks of resumable uploads ("tus!"); the second is the id's hash. */
const LOCK_CLASS = 0x74757321;

@injectable()
export class UploadsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** An upload that has not expired; null when it does not exist or has. */
  async find(id: string): Promise<UploadRow | null> {
    const [row] = await this.sql<UploadRow[]>`select * from resumable_uploads where id = ${id} and expires_at > now()`;
    return row ?? null;
  }

  /** Serialises, until `tx` ends, the transactions that create uploads of `owner` (the count must hold). */
  async lockOwner(tx: Queryable, owner: string): Promise<void> {
    await tx`select pg_advisory_xact_lock(hashtext(${`resumable:${owner}`}))`;
  }

  async countIncomplete(tx: Queryable, owner: string): Promise<number> {
    const [row] = await tx<{ n: number }[]>`
      select count(*) as n from resumable_uploads where owner_id = ${owner} and completed_at is null and expires_at > now()`;
    return row!.n;
  }

  async insert(tx: Queryable, upload: NewUpload, lifetimeSeconds: number): Promise<UploadRow> {
    const [row] = await tx<UploadRow[]>`
      insert into resumable_uploads (id, owner_id, cut_id, file_name, display_name, extension, length, expires_at)
      values (${upload.id}, ${upload.ownerId}, ${upload.cutId}, ${upload.fileName}, ${upload.displayName}, ${upload.extension},
              ${upload.length}, now() + make_interval(secs => ${lifetimeSeconds}))
      returning *`;
    return row!;
  }

  /** Takes the upload's lock if no other PATCH (in any instance) holds it; null when one does. */
  async tryLock(id: string): Promise<UploadLock | null> {
    const connection = await this.sql.reserve();
    try {
      const [row] = await connection<{ locked: boolean }[]>`select pg_try_advisory_lock(${LOCK_CLASS}, hashtext(${id})) as locked`;
      if (row!.locked) {
        return {
          release: async () => {
            try {
              await connection`select pg_advisory_unlock(${LOCK_CLASS}, hashtext(${id}))`;
            } finally {
              connection.release();
            }
          },
        };
      }
    } catch (error) {
      connection.release();
      throw error;
    }
    connection.release();
    return null;
  }

  /** Records bytes up to `received` as durable, and moves the expiry on from now. */
  async advance(id: string, received: number, lifetimeSeconds: number): Promise<Date> {
    const [row] = await this.sql<{ expiresAt: Date }[]>`
      update resumable_uploads set received = ${received}, expires_at = now() + make_interval(secs => ${lifetimeSeconds})
      where id = ${id} returning expires_at`;
    return row!.expiresAt;
  }

  /** Marks the upload as having become `fileId`, in the transaction that records the file. */
  async complete(tx: Queryable, id: string, fileId: string): Promise<void> {
    await tx`update resumable_uploads set received = length, file_id = ${fileId}, completed_at = now() where id = ${id}`;
  }

  async delete(id: string): Promise<void> {
    await this.sql`delete from resumable_uploads where id = ${id}`;
  }

  /** Deletes expired uploads; answers their ids, whose bytes the caller removes. */
  async deleteExpired(): Promise<string[]> {
    const rows = await this.sql<{ id: string }[]>`delete from resumable_uploads where expires_at <= now() returning id`;
    return rows.map((row) => row.id);
  }

  /** Which of `ids` still have a row (expired or not). */
  async existing(ids: string[]): Promise<Set<string>> {
    const rows = await this.sql<{ id: string }[]>`select id from resumable_uploads where id = any(${ids}::uuid[])`;
    return new Set(rows.map((row) => row.id));
  }
}
