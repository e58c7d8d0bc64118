import { createHash, randomUUID } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createSHA256 } from 'hash-wasm';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Clock } from '../core/clock.js';
import type { Sql } from '../core/database.js';
import { BLOB_STORE, CLOCK, LOGGER, SQL } from '../core/di.js';
import { DomainError, invalidField, notFound, unavailable } from '../core/errors.js';
import { FileIntake } from '../core/file-intake.js';
import type { FileRule } from '../core/file-types.js';
import type { Logger } from '../core/logger.js';
import { PendingObjects } from '../core/pending-objects.js';
import { ProjectAccess } from '../core/project-access.js';
import { Shutdown } from '../core/shutdown.js';
import { type BlobStore, ObjectMissing, storeKeys } from '../core/store/index.js';
import { UploadLimits } from '../core/upload-limits.js';
import { UploadAdmission } from '../files/admission.js';
import { FilesService } from '../files/service.js';
import { MinimumRate, tooSlow } from './minimum-rate.js';
import { Metrics } from '../core/metrics.js';
import { PartSink } from './part-sink.js';
import { type Expiry, type Progress, type UploadLock, type UploadRow, UploadsRepository } from './repository.js';

/** An incomplete upload expires this long after it last received bytes, */
export const UPLOAD_LIFETIME_SECONDS = 24 * 60 * 60;
/** and this long after its creation at the latest, however its bytes trickle in. */
export const UPLOAD_MAX_AGE_SECONDS = 7 * 24 * 60 * 60;
const EXPIRY: Expiry = { lifetimeSeconds: UPLOAD_LIFETIME_SECONDS, maxAgeSeconds: UPLOAD_MAX_AGE_SECONDS };
/** At most this many incomplete uploads per user at a time. */
export const MAX_INCOMPLETE_UPLOADS = 10;
/** At most this many PATCHes of one user receive bytes at once in an instance; another is 429 with Retry-After 1. */
export const MAX_PATCHES_PER_USER = 3;
export type ChecksumAlgorithm = 'sha1' | 'sha256';

export interface NewUploadRequest {
  /** The cut; with versionOf it may be left out (given, it must be the series' cut). */
  cutId: string | null;
  /** Any file of a series: the upload becomes its next version. */
  versionOf: string | null;
  /** If-None-Match: with versionOf, the latest version's sha256 makes the creation 412 UNCHANGED. */
  ifNoneMatch: string | null;
  /** The client's file name (fileNameSchema); its extension decides the type. */
  fileName: string;
  /** The display name of the file it becomes; the file name when null. */
  displayName: string | null;
  /** Its path in the cut's folder (NFC, §16); null: none, or with versionOf the series' own. */
  path: string | null;
  length: number;
  /** The Upload-Metadata header as sent, for HEAD to repeat. */
  metadata: string;
}

export interface PatchRequest {
  /** Upload-Offset: must equal the bytes already received. */
  offset: number;
  /** Upload-Checksum of this request's bytes. */
  checksum: { algorithm: ChecksumAlgorithm; digest: Buffer } | null;
  /** Content-Length, when the request announced it. */
  declaredBytes: number | null;
  body: Readable;
}

/** Where an upload stands: HEAD answers it, and every PATCH that is answered. */
export interface UploadState {
  id: string;
  received: number;
  length: number;
  expiresAt: Date;
  /** The file the upload became, once complete. */
  fileId: string | null;
  /** The Upload-Metadata of its creation (null for uploads created before it was kept). */
  metadata: string | null;
}

/**
 * Resumable uploads (tus 1.0.0): the same upload as POST /api/files/upload, in pieces. Its creation is admitted by
 * the same rules (UploadAdmission), the bytes pass the same checks (FileIntake) and become a File through
 * FilesService.upload, as a multipart upload's do. What
 * makes them resumable on any instance: the bytes go into a multipart upload of the store (core/store) in
 * parts of its part size, the key being the file's it becomes; the offset, the parts, the tail shorter than a
 * part and the sha256 state live in PostgreSQL, written only once the parts they name are stored (PartSink);
 * a PATCH holds its upload's advisory lock (seen by every instance; freed when a process dies) in the session
 * of the one locks connection, so no pooled connection waits on a body, and a PATCH cut off mid-body records
 * what arrived. An incomplete upload holds its whole length of its owner's quota.
 */
@injectable()
export class UploadsService {
  /** The uploads whose lock this instance holds: the locks session would grant them again. */
  private readonly lockedHere = new Set<string>();
  /** PATCHes receiving bytes in this instance, by user. */
  private readonly patchesByUser = new Map<string, number>();
  private deletions: { unlisten(): Promise<void> } | null = null;

  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(LOGGER) private readonly log: Logger,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(BLOB_STORE) private readonly store: BlobStore,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(UploadAdmission) private readonly admission: UploadAdmission,
    @inject(UploadLimits) private readonly limits: UploadLimits,
    @inject(Shutdown) private readonly shutdown: Shutdown,
    @inject(FilesService) private readonly files: FilesService,
    @inject(UploadsRepository) private readonly repository: UploadsRepository,
    @inject(PendingObjects) private readonly pending: PendingObjects,
    @inject(Metrics) private readonly metrics: Metrics,
  ) {}

  /**
   * Aborts the multipart upload of every upload whose row is deleted from now on, whoever deletes it (a cut,
   * project or account deleted takes its uploads by cascade), as soon as an instance hears of it.
   */
  async start(): Promise<void> {
    this.deletions = await this.repository.onDeleted(() => void this.abortAbandoned());
  }

  async stop(): Promise<void> {
    await this.deletions?.unlisten();
  }

  /**
   * Every check before any byte is the upload admission's (files/admission.ts), as for a multipart upload; then
   * the count of incomplete uploads (tus's own limit) and the quota's final word, with the upload's whole length,
   * in the transaction that records it.
   */
  async create(principal: Principal, request: NewUploadRequest): Promise<UploadState> {
    const { cutId, series, rule } = await this.admission.announced(principal, request);
    const id = randomUUID();
    const row = await this.sql.begin(async (tx) => {
      await this.repository.lockOwner(tx, principal.userId);
      if ((await this.repository.countIncomplete(tx, principal.userId)) >= MAX_INCOMPLETE_UPLOADS) {
        throw new DomainError(
          'RATE_LIMITED',
          `At most ${MAX_INCOMPLETE_UPLOADS} incomplete uploads at a time: finish or cancel one first`,
          { retryAfterSeconds: 60 },
        );
      }
      await this.admission.checkQuotaInTransaction(tx, principal, request.length);
      return this.repository.insert(
        tx,
        {
          id,
          ownerId: principal.userId,
          cutId,
          fileName: request.fileName,
          displayName: request.displayName,
          seriesId: series?.seriesId ?? null,
          path: request.path,
          extension: rule.extension,
          length: request.length,
          metadata: request.metadata,
          objectId: randomUUID(),
        },
        EXPIRY,
      );
    });
    this.metrics.uploadsStarted.inc({ protocol: 'tus' });
    return stateOf(row);
  }

  /** An upload of the caller's: others, and expired uploads, are 404. */
  async state(principal: Principal, id: string): Promise<UploadState> {
    return stateOf(await this.owned(principal, id));
  }

  /**
   * Appends the request's bytes at `offset`. 423 while another PATCH of the upload runs anywhere; 429 while
   * MAX_PATCHES_PER_USER of its owner's run here. The PATCH that reaches the length records the File before
   * it answers.
   */
  async patch(principal: Principal, id: string, request: PatchRequest): Promise<UploadState> {
    // The rate is measured from the request's arrival.
    const pace = new MinimumRate(this.clock);
    await this.owned(principal, id);
    const running = this.patchesByUser.get(principal.userId) ?? 0;
    if (running >= MAX_PATCHES_PER_USER) {
      throw new DomainError('RATE_LIMITED', `At most ${MAX_PATCHES_PER_USER} uploads of yours receive bytes at once: try again when one has ended`, {
        retryAfterSeconds: 1,
      });
    }
    this.patchesByUser.set(principal.userId, running + 1);
    try {
      return await this.whileLocked(id, 'Another request is sending bytes to this upload; try again when it has ended', (lock) =>
        this.patchLocked(principal, lock, request, pace),
      );
    } finally {
      const left = this.patchesByUser.get(principal.userId)! - 1;
      if (left === 0) this.patchesByUser.delete(principal.userId);
      else this.patchesByUser.set(principal.userId, left);
    }
  }

  /** Termination: the row and the bytes go. A complete upload's file stays (it is a File now). */
  async terminate(principal: Principal, id: string): Promise<void> {
    await this.owned(principal, id);
    await this.whileLocked(id, 'A request is sending bytes to this upload; try again when it has ended', () => this.remove(id));
    this.metrics.uploadsTerminated.inc();
  }

  /**
   * Run by the purge job: deletes expired uploads, then aborts the multipart uploads of every upload whose
   * row went (expired, terminated, taken by a cascade), whichever instance deleted it.
   */
  async purgeExpired(): Promise<number> {
    const expired = await this.repository.deleteExpired();
    await this.abortAbandoned();
    return expired.length;
  }

  /** Aborts the recorded multipart uploads of deleted uploads; one the store cannot abort now stays for the next purge. */
  private async abortAbandoned(): Promise<void> {
    for (const { objectKey, multipartId } of await this.repository.abandoned()) {
      try {
        await this.store.abortMultipart(objectKey, multipartId);
        await this.repository.forgetAbandoned(multipartId);
      } catch (error) {
        this.log.warn('could not abort the multipart upload of a removed resumable upload; the purge tries again', { objectKey, error });
      }
    }
  }

  /**
   * Runs `work` holding the upload's lock: 423 with `busy` while another request (here or on another
   * instance) holds it. Tracked by the shutdown, so the locks connection closes only after the unlock.
   */
  private async whileLocked<T>(id: string, busy: string, work: (lock: UploadLock) => Promise<T>): Promise<T> {
    if (this.lockedHere.has(id)) throw new DomainError('UPLOAD_LOCKED', busy);
    this.lockedHere.add(id);
    let lock: UploadLock | null = null;
    try {
      lock = await this.repository.tryLock(id);
    } finally {
      if (!lock) this.lockedHere.delete(id);
    }
    if (!lock) throw new DomainError('UPLOAD_LOCKED', busy);
    const held = lock;
    return this.shutdown.track(
      (async () => {
        try {
          return await work(held);
        } finally {
          this.lockedHere.delete(id);
          await this.repository.unlock(held);
        }
      })(),
    );
  }

  private async patchLocked(principal: Principal, lock: UploadLock, request: PatchRequest, pace: MinimumRate): Promise<UploadState> {
    const id = lock.id;
    // Read again under the lock: the PATCH that held it before may have moved the offset.
    const upload = await this.owned(principal, id);
    if (request.offset !== upload.received) {
      throw new DomainError('OFFSET_MISMATCH', `This upload has ${upload.received} bytes; send Upload-Offset: ${upload.received}`);
    }
    if (upload.completedAt) return stateOf(upload);
    if (request.declaredBytes !== null && upload.received + request.declaredBytes > upload.length) {
      throw invalidField('Content-Length', `goes past Upload-Length (${upload.length - upload.received} bytes remain)`);
    }
    const rule = this.admission.ruleOfExtension(upload.extension);
    try {
      const sink = await this.append(lock, upload, rule, request, pace).catch((error: unknown) => {
        this.metrics.uploadsFailed.inc({ protocol: 'tus' });
        throw error;
      });
      const kept = async () => {
        const expiresAt = await this.advance(lock, sink.progress());
        this.metrics.uploadBytes.inc({ protocol: 'tus' }, sink.position - upload.received);
        return expiresAt;
      };
      if (sink.position < upload.length) return { ...stateOf(upload), received: sink.position, expiresAt: await kept() };
      await kept();
      return await this.complete(principal, lock, upload, rule, sink);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'UNSUPPORTED_FILE_TYPE') await this.remove(id);
      if (error instanceof ObjectMissing) {
        // Its multipart upload is gone from the store (a database restored from a backup, which holds no partial uploads).
        this.log.warn('a resumable upload without its stored parts was removed', { id });
        await this.remove(id);
        throw notFound('Upload');
      }
      throw error;
    }
  }

  /**
   * Takes the body at the upload's offset through the upload rules into the store (PartSink). A body cut off
   * keeps what arrived (unless a checksum must cover it): its progress is recorded before this rejects.
   * Refused bytes (checksum, limits) and bytes the store failed to take are not recorded: the offset stays.
   */
  private async append(lock: UploadLock, upload: UploadRow, rule: FileRule, request: PatchRequest, pace: MinimumRate): Promise<PartSink> {
    const start = upload.received;
    const hasher = await createSHA256();
    if (upload.hashState) hasher.load(upload.hashState);
    else hasher.init();
    const key = storeKeys.file(upload.objectId, upload.extension);
    const sink = new PartSink(this.store, key, upload, hasher, async () => {
      const multipartId = await this.store.startMultipart(key);
      if (!(await this.repository.setMultipart(lock, multipartId))) {
        await this.store.abortMultipart(key, multipartId).catch(() => undefined);
        throw lockLost();
      }
      return multipartId;
    });
    const intake = new FileIntake([rule], rule, { received: start, head: upload.head, hash: null });
    const checksum = request.checksum ? createHash(request.checksum.algorithm) : null;
    // The quota counts the upload's whole length since its creation: its bytes only need room on disk.
    const reservation = await this.limits.reserveDisk(request.declaredBytes ?? upload.length - start);
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        try {
          if (intake.received + chunk.length > upload.length) throw invalidField('body', 'goes past Upload-Length');
          intake.take(chunk);
        } catch (error) {
          return callback(error as Error);
        }
        const fastEnough = pace.take(chunk.length);
        checksum?.update(chunk);
        reservation.add(chunk.length).then(() => {
          callback(null, chunk);
          // Cut after the chunk has reached the sink: what arrived is kept.
          if (!fastEnough) setImmediate(() => meter.destroy(tooSlow()));
        }, callback);
      },
    });
    const cut = () => request.body.destroy(unavailable('The server is shutting down: the bytes received so far are kept; resume this upload in a moment.'));
    this.shutdown.signal.addEventListener('abort', cut, { once: true });
    try {
      await pipeline(request.body, meter, sink);
    } catch (error) {
      await sink.settled();
      if (sink.storeFailure !== null) throw sink.storeFailure;
      if (error instanceof DomainError && error.code !== 'UNAVAILABLE') throw error;
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC') throw this.limits.diskFull();
      // Cut off (the client went away, the connection idled, the server shuts down): keep what arrived.
      if (checksum) throw error;
      if (sink.position > start) {
        await this.advance(lock, sink.progress());
        this.metrics.uploadBytes.inc({ protocol: 'tus' }, sink.position - start);
      }
      throw error;
    } finally {
      this.shutdown.signal.removeEventListener('abort', cut);
      reservation.release();
    }
    if (checksum && !checksum.digest().equals(request.checksum!.digest)) {
      throw new DomainError('CHECKSUM_MISMATCH', `The ${request.checksum!.algorithm} checksum does not match the bytes sent; they were discarded`);
    }
    if (sink.position === upload.length) intake.finish();
    return sink;
  }

  /**
   * Records the bytes up to `received` as durable. 404 when the row went meanwhile (its cut or owner deleted);
   * 503 when the lock was lost with the locks connection (another request may hold it now): the client asks
   * for the offset and continues.
   */
  private async advance(lock: UploadLock, progress: Progress): Promise<Date> {
    const expiresAt = await this.repository.advance(lock, progress, EXPIRY);
    if (expiresAt) return expiresAt;
    if (!(await this.repository.find(lock.id))) throw notFound('Upload');
    throw lockLost();
  }

  /** The last byte arrived: the file is recorded as a multipart upload's is, and the upload marks itself complete. */
  private async complete(principal: Principal, lock: UploadLock, upload: UploadRow, rule: FileRule, sink: PartSink): Promise<UploadState> {
    // A completion that fails ends the upload: a lost lock is found before, while the upload can still be resumed.
    if (!(await this.repository.stillHeld(lock))) throw lockLost();
    const key = storeKeys.file(upload.objectId, upload.extension);
    const sha256 = sink.sha256();
    // The object is made from the recorded parts first (a failure here leaves the upload to be completed again),
    // entered on the pending_objects ledger before it can appear: FilesService.upload's transaction settles it.
    await this.pending.add(key);
    await sink.completeObject();
    try {
      const file = await this.files.upload(
        principal,
        {
          cutId: upload.cutId,
          series: upload.seriesId === null ? null : { seriesId: upload.seriesId },
          name: upload.displayName,
          path: upload.path,
          originalName: upload.fileName,
          file: { id: upload.objectId, key, originalName: upload.fileName, rule, size: upload.length, sha256 },
        },
        async (tx, record) => {
          if (!(await this.repository.complete(tx, lock, record.id))) throw lockLost();
        },
      );
      this.metrics.uploadsCompleted.inc({ protocol: 'tus' });
      this.metrics.uploadDuration.observe({ protocol: 'tus' }, (this.clock.now() - upload.createdAt.getTime()) / 1000);
      return { ...stateOf(upload), received: upload.length, fileId: file.id };
    } catch (error) {
      // FilesService.upload removed the bytes: the upload cannot complete any more.
      await this.repository.delete(upload.id);
      throw error;
    }
  }

  /** The row goes; its multipart upload (recorded by migration 027's trigger) is aborted at once, or by the purge. */
  private async remove(id: string): Promise<void> {
    await this.repository.delete(id);
    await this.abortAbandoned();
  }

  private async owned(principal: Principal, id: string): Promise<UploadRow> {
    const upload = await this.repository.find(id);
    if (!upload || upload.ownerId !== principal.userId) throw notFound('Upload');
    // A token limited to other projects does not see its owner's uploads into this one.
    if (principal.token?.projectIds) await this.access.require(principal, 'cut', upload.cutId);
    return upload;
  }

}

function stateOf(row: UploadRow): UploadState {
  return { id: row.id, received: row.received, length: row.length, expiresAt: row.expiresAt, fileId: row.fileId, metadata: row.metadata };
}

const lockLost = (): DomainError =>
  unavailable('This upload’s lock was lost with a database connection: ask for its offset (HEAD) and continue from there', 1);
