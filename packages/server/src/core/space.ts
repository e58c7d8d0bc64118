import { statfs } from 'node:fs/promises';
import { inject, injectable } from 'tsyringe';
import type { Config } from './config.js';
import type { Queryable } from './database.js';
import { CONFIG } from './di.js';
import { DomainError } from './errors.js';
import { describeBytes } from './file-types.js';
import { SpaceRepository } from './space-repository.js';

/** The bytes an upload in flight holds: what its Content-Length announced, or what has arrived, whichever is more. */
class Upload {
  received = 0;

  constructor(
    /** Whose quota the bytes count towards; null when it counts them already (a resumable upload's PATCH). */
    readonly owner: string | null,
    readonly declared: number,
  ) {}

  get held(): number {
    return Math.max(this.declared, this.received);
  }

  /** Announced and not yet arrived: still to come on disk. */
  get outstanding(): number {
    return Math.max(0, this.declared - this.received);
  }
}

/** One upload's hold on disk space and quota, from before its first byte until its response has ended. */
export interface Reservation {
  /** Counts `bytes` more that arrived; rejects with 507 when they cross the free-disk floor or the quota. */
  add(bytes: number): Promise<void>;
  release(): void;
}

/** Re-measure the free space at least this often while bytes arrive (other processes write too). */
const RESTAT_BYTES = 8 * 1024 * 1024;

/**
 * The free-disk floor (the local driver's) and the per-user quota. Uploads in flight reserve their bytes in this
 * process, so parallel uploads cannot slip past a limit together: each counts what the others announced
 * (Content-Length) or received. Instances sharing a disk each keep their own reservations; the quota's
 * final check (`checkQuota`) runs in the transaction that writes the row, so it holds across instances.
 */
@injectable()
export class Space {
  private readonly uploads = new Set<Upload>();
  /** The free bytes the last statfs saw, and the bytes that arrived since. */
  private measuredFree = 0;
  private arrivedSinceMeasure = Number.POSITIVE_INFINITY;

  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(SpaceRepository) private readonly repository: SpaceRepository,
  ) {}

  /** Whether an upload is streaming into this process now (the analysis queue gives way to it). */
  get uploading(): boolean {
    return this.uploads.size > 0;
  }

  /**
   * Reserves room for an upload of `owner` before its body is read; `declared` is its Content-Length (0 when
   * unknown). Refuses with 507 when that alone would cross the floor or the quota.
   */
  async reserve(owner: string, declared: number): Promise<Reservation> {
    return this.hold(owner, declared, this.config.userQuotaBytes === null ? null : await this.repository.usedBytes(owner));
  }

  /**
   * Reserves room on disk for bytes the quota counts already (a resumable upload holds its whole length from
   * its creation on): the free-disk floor only.
   */
  async reserveDisk(declared: number): Promise<Reservation> {
    return this.hold(null, declared, null);
  }

  private async hold(owner: string | null, declared: number, used: number | null): Promise<Reservation> {
    const upload = new Upload(owner, declared);
    this.uploads.add(upload);
    const reservation: Reservation = {
      add: async (bytes) => {
        upload.received += bytes;
        this.arrivedSinceMeasure += bytes;
        this.checkQuota(upload, used);
        await this.checkFloor();
      },
      release: () => this.uploads.delete(upload),
    };
    try {
      this.checkQuota(upload, used);
      await this.checkFloor();
    } catch (error) {
      reservation.release();
      throw error;
    }
    return reservation;
  }

  /** After the disk reported itself full: the next check measures instead of trusting the last figure. */
  measureAgain(): void {
    this.arrivedSinceMeasure = Number.POSITIVE_INFINITY;
  }

  get quotaBytes(): number | null {
    return this.config.userQuotaBytes;
  }

  /**
   * The quota's final word, inside the transaction that records `bytes` more for `owner` (0 once it has
   * written them): serialised per user, so two transactions cannot both pass on the same remaining room.
   */
  async checkQuotaInTransaction(tx: Queryable, owner: string, bytes: number): Promise<void> {
    const limit = this.config.userQuotaBytes;
    if (limit === null) return;
    await this.repository.lockQuota(tx, owner);
    if ((await this.repository.usedBytes(owner, tx)) + bytes > limit) throw quotaExceeded(limit);
  }

  private checkQuota(upload: Upload, used: number | null): void {
    const limit = this.config.userQuotaBytes;
    if (limit === null || used === null || upload.owner === null) return;
    let held = 0;
    for (const other of this.uploads) if (other.owner === upload.owner) held += other.held;
    if (used + held > limit) throw quotaExceeded(limit);
  }

  /**
   * The free space left once every announced byte has arrived must stay at or above the floor. On S3 the bytes
   * go to the bucket, not to DATA_DIR's disk (which holds only state, and a resumable upload's tail in
   * PostgreSQL): there is no floor to keep.
   */
  private async checkFloor(): Promise<void> {
    if (this.config.storage.driver === 's3') return;
    const floor = this.config.minFreeDiskBytes;
    const fits = () => {
      let outstanding = 0;
      for (const upload of this.uploads) outstanding += upload.outstanding;
      return this.measuredFree - this.arrivedSinceMeasure - outstanding >= floor;
    };
    if (this.arrivedSinceMeasure < RESTAT_BYTES && fits()) return;
    await this.measure();
    if (!fits()) throw insufficientStorage();
  }

  private async measure(): Promise<void> {
    const arrivedBefore = this.arrivedSinceMeasure;
    const stats = await statfs(this.config.dataDir);
    // Bytes that arrived while statfs ran may or may not be in its figure: count them as not yet written.
    this.arrivedSinceMeasure = Number.isFinite(arrivedBefore) ? Math.max(0, this.arrivedSinceMeasure - arrivedBefore) : 0;
    this.measuredFree = stats.bavail * stats.bsize;
  }
}

export function insufficientStorage(): DomainError {
  return new DomainError('INSUFFICIENT_STORAGE', 'The server is short of disk space; this upload cannot be stored now');
}

function quotaExceeded(limit: number): DomainError {
  return new DomainError('QUOTA_EXCEEDED', `This upload would take your stored uploads over your quota of ${describeBytes(limit)}`);
}
