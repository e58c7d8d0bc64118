import type postgres from 'postgres';
import { inject, injectable } from 'tsyringe';
import type { UploadedPart } from '../core/store/index.js';
import type { Queryable, Sql } from '../core/database.js';
import { LOCKS_SQL, SQL } from '../core/di.js';

/** A `resumable_uploads` row. */
export interface UploadRow {
  id: string;
  ownerId: string;
  cutId: string;
  fileName: string;
  displayName: string | null;
  /** The series it becomes the next version of (Upload-Metadata versionOf); null: it starts one. */
  seriesId: string | null;
  /** Its path in the cut's folder (Upload-Metadata path, NFC, §16); null: none, or the series' own. */
  path: string | null;
  extension: string;
  length: number;
  received: number;
  fileId: string | null;
  completedAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
  /** The Upload-Metadata header of the creation; null for uploads created before it was kept. */
  metadata: string | null;
  /** The id of the file it becomes, whose key its bytes are stored under. */
  objectId: string;
  /** The store's multipart upload, once a whole part was written. */
  multipartId: string | null;
  /** The parts written, each of the store's part size. */
  parts: UploadedPart[];
  /** The bytes after the last part. */
  tail: Buffer;
  /** The first bytes (up to the longest signature). */
  head: Buffer;
  /** The sha256 state over the first `received` bytes (hash-wasm's save()); null before any byte. */
  hashState: Buffer | null;
}

export type NewUpload = Pick<
  UploadRow,
  'id' | 'ownerId' | 'cutId' | 'fileName' | 'displayName' | 'seriesId' | 'path' | 'extension' | 'length' | 'metadata' | 'objectId'
>;

/** What an answered PATCH leaves durable: the offset and everything needed to continue from it, anywhere. */
export type Progress = Pick<UploadRow, 'received' | 'parts' | 'tail' | 'head' | 'hashState'>;

/** A multipart upload whose resumable upload is gone: the purge aborts it (migration 027's trigger records it). */
export interface AbandonedMultipart {
  objectKey: string;
  multipartId: string;
}

/** When an upload expires: `lifetimeSeconds` after its last bytes, and never later than `maxAgeSeconds` after its creation. */
export interface Expiry {
  lifetimeSeconds: number;
  maxAgeSeconds: number;
}

/**
 * An upload's lock, held by the session of the locks connection (LOCKS_SQL) whose backend is `pid`: when that
 * connection was lost and replaced, PostgreSQL freed the lock, and writes fenced by it no longer happen.
 */
export interface UploadLock {
  id: string;
  pid: number;
}

/** The first key of the two-key advisory locks of resumable uploads ("tus!"); the second is the id's hash. */
const LOCK_CLASS = 0x74757321;
/** Migration 018's trigger notifies it with the id of each deleted upload. */
const DELETED_CHANNEL = 'resumable_upload_deleted';

/**
 * Whether the session `lock.pid` still holds the lock (pg_locks shows a two-key advisory lock as classid,
 * objid with objsubid 2; objid is the key's bits as an oid).
 */
function held(sql: Queryable, lock: UploadLock) {
  return sql`exists (
    select 1 from pg_locks
    where locktype = 'advisory' and granted and pid = ${lock.pid}
      and classid = ${LOCK_CLASS}::bigint::oid and objid = (hashtext(${lock.id})::bigint & 4294967295)::oid and objsubid = 2)`;
}

@injectable()
export class UploadsRepository {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(LOCKS_SQL) private readonly locks: Sql,
  ) {}

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

  async insert(tx: Queryable, upload: NewUpload, expiry: Expiry): Promise<UploadRow> {
    const [row] = await tx<UploadRow[]>`
      insert into resumable_uploads (id, owner_id, cut_id, file_name, display_name, series_id, path, extension, length, metadata, object_id, expires_at)
      values (${upload.id}, ${upload.ownerId}, ${upload.cutId}, ${upload.fileName}, ${upload.displayName}, ${upload.seriesId}, ${upload.path}, ${upload.extension},
              ${upload.length}, ${upload.metadata}, ${upload.objectId},
              now() + make_interval(secs => ${Math.min(expiry.lifetimeSeconds, expiry.maxAgeSeconds)}))
      returning *`;
    return row!;
  }

  /**
   * Takes the upload's lock unless another session (another instance) holds it; null when one does. The
   * caller makes sure this instance does not ask twice for one upload: the session's locks are re-entrant.
   */
  async tryLock(id: string): Promise<UploadLock | null> {
    const [row] = await this.locks<{ locked: boolean; pid: number }[]>`
      select pg_try_advisory_lock(${LOCK_CLASS}, hashtext(${id})) as locked, pg_backend_pid() as pid`;
    return row!.locked ? { id, pid: row!.pid } : null;
  }

  async unlock(lock: UploadLock): Promise<void> {
    // After a lost connection the new session holds nothing: unlocking there changes nothing (and says false).
    await this.locks`select pg_advisory_unlock(${LOCK_CLASS}, hashtext(${lock.id}))`;
  }

  /**
   * Records bytes up to `received` as durable and moves the expiry on, while `lock` is still held; null when
   * it is not any more (its connection was lost) or the row is gone (its cut or owner deleted meanwhile).
   */
  async advance(lock: UploadLock, progress: Progress, expiry: Expiry): Promise<Date | null> {
    const [row] = await this.sql<{ expiresAt: Date }[]>`
      update resumable_uploads
      set received = ${progress.received}, parts = ${this.sql.json(progress.parts as unknown as postgres.JSONValue)}, tail = ${progress.tail},
          head = ${progress.head}, hash_state = ${progress.hashState},
          expires_at = least(now() + make_interval(secs => ${expiry.lifetimeSeconds}), created_at + make_interval(secs => ${expiry.maxAgeSeconds}))
      where id = ${lock.id} and ${held(this.sql, lock)}
      returning expires_at`;
    return row?.expiresAt ?? null;
  }

  /**
   * Records the store's multipart upload as soon as it exists, while `lock` is held: whatever happens next,
   * the purge can abort it. False when the lock was lost or the row is gone.
   */
  async setMultipart(lock: UploadLock, multipartId: string): Promise<boolean> {
    const rows = await this.sql`update resumable_uploads set multipart_id = ${multipartId} where id = ${lock.id} and ${held(this.sql, lock)}`;
    return rows.count === 1;
  }

  /** Whether `lock` is still held: its session was not lost meanwhile. */
  async stillHeld(lock: UploadLock): Promise<boolean> {
    const [row] = await this.sql<{ held: boolean }[]>`select ${held(this.sql, lock)} as held`;
    return row!.held;
  }

  /**
   * Marks the upload as having become `fileId`, in the transaction that records the file, while `lock` is
   * still held; false when it is not any more (the caller rolls back).
   */
  async complete(tx: Queryable, lock: UploadLock, fileId: string): Promise<boolean> {
    const rows = await tx`
      update resumable_uploads set received = length, file_id = ${fileId}, completed_at = now(), tail = '\\x'::bytea, hash_state = null
      where id = ${lock.id} and ${held(tx, lock)}`;
    return rows.count === 1;
  }

  async delete(id: string): Promise<void> {
    await this.sql`delete from resumable_uploads where id = ${id}`;
  }

  /** Deletes expired uploads; answers their ids, whose bytes the caller removes. */
  async deleteExpired(): Promise<string[]> {
    const rows = await this.sql<{ id: string }[]>`delete from resumable_uploads where expires_at <= now() returning id`;
    return rows.map((row) => row.id);
  }

  /** Calls `removed` with the id of every upload whose row is deleted, once the deletion commits, on every instance. */
  async onDeleted(removed: (id: string) => void): Promise<{ unlisten(): Promise<void> }> {
    return this.sql.listen(DELETED_CHANNEL, removed);
  }

  async abandoned(): Promise<AbandonedMultipart[]> {
    return this.sql<AbandonedMultipart[]>`select object_key, multipart_id from abandoned_multipart_uploads order by recorded_at limit 1000`;
  }

  async forgetAbandoned(multipartId: string): Promise<void> {
    await this.sql`delete from abandoned_multipart_uploads where multipart_id = ${multipartId}`;
  }
}
