import path from 'node:path';
import { type DeletedSeries, type FileRecord, filePathKey, type FileVersions, type StemEntriesPage, type Waveform } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Sql, Tx } from '../core/database.js';
import { BLOB_STORE, SQL } from '../core/di.js';
import { LocalDataDir } from '../core/local-data-dir.js';
import { StoredObjects, STRAY_AGE_MS } from '../core/stored-objects.js';
import { DomainError, forbidden, invalidField, notFound } from '../core/errors.js';
import type { ReceivedFile } from '../core/multipart.js';
import { PendingObjects } from '../core/pending-objects.js';
import { ProjectAccess } from '../core/project-access.js';
import { type BlobStore, ObjectMissing, storeKeys } from '../core/store/index.js';
import type { StoredBytes } from '../core/transfer.js';
import { EventPublisher, projectEvent } from '../events/publisher.js';
import { PreviewsRepository } from '../previews/repository.js';
import { checkKeptPath, checkVersion, pathTaken, UploadAdmission } from './admission.js';
import { type FileRow, FilesRepository, isPathTaken, type RemovedBytes, type StoredFileRow, toFileRecord, toStemEntry } from './repository.js';
import { ReviewGate } from './review-gate.js';
import { TrashService, trashed } from '../trash/service.js';

/** A received upload to record: into a cut, or as the next version of a series (named by any of its files, or by its id). */
export interface NewUpload {
  cutId: string | null;
  series: { fileId: string } | { seriesId: string } | null;
  /** The display name; null: the latest version's (with versionOf), else `originalName`. */
  name: string | null;
  /** Its path in the cut's folder, NFC (§16): a new series' path, or a series' new path; null keeps the series' own. */
  path: string | null;
  originalName: string;
  file: ReceivedFile;
}

/** A stored file name as its url names it: `<uuid>.<ext>`. */
const STORED_NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([a-z0-9]{1,5})$/;

@injectable()
export class FilesService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(LocalDataDir) private readonly local: LocalDataDir,
    @inject(BLOB_STORE) private readonly store: BlobStore,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(FilesRepository) private readonly repository: FilesRepository,
    @inject(UploadAdmission) private readonly admission: UploadAdmission,
    @inject(PendingObjects) private readonly pending: PendingObjects,
    @inject(PreviewsRepository) private readonly previews: PreviewsRepository,
    @inject(TrashService) private readonly trash: TrashService,
    @inject(ReviewGate) private readonly gate: ReviewGate,
  ) {}

  /**
   * Records a received upload, whose bytes are stored already (under the file's id): in one transaction that
   * locks the cut, writes the row and publishes the event. Whatever fails, neither the bytes nor the row stay behind.
   * With `series` it becomes the next version of that series (its cut when `cutId` is left out, its
   * latest version's display name when `name` is). `alsoRecord` runs in that transaction once the row is
   * written: a resumable upload marks itself complete.
   */
  async upload(
    principal: Principal,
    upload: NewUpload,
    alsoRecord?: (tx: Tx, file: FileRecord) => Promise<void>,
  ): Promise<FileRecord> {
    try {
      return await this.record(principal, { id: upload.file.id, ...upload }, alsoRecord);
    } catch (error) {
      await this.pending.discard(upload.file.key);
      if (isPathTaken(error) && upload.path !== null) {
        const cutId = upload.cutId ?? (upload.series ? (await this.repository.seriesOf(this.sql, upload.series))?.cutId : undefined);
        throw pathTaken(upload.path, cutId ? await this.repository.seriesAtPath(this.sql, cutId, filePathKey(upload.path)) : null);
      }
      throw error;
    }
  }

  private record(
    principal: Principal,
    upload: NewUpload & { id: string },
    alsoRecord?: (tx: Tx, file: FileRecord) => Promise<void>,
  ): Promise<FileRecord> {
    const { id, file } = upload;
    return this.sql.begin(async (tx) => {
      const series = upload.series === null ? null : await this.repository.seriesOf(tx, upload.series);
      if (upload.series !== null && !series) throw notFound('File');
      const cutId = series?.cutId ?? upload.cutId;
      if (cutId === null) throw invalidField('cutId', 'is required without versionOf');
      if (!(await this.repository.lockCut(tx, cutId))) throw notFound('Cut');
      const { projectId } = await this.access.require(principal, 'cut', cutId, 'MEMBER', tx);
      let version: { id: string; version: number } | undefined;
      let name = upload.name;
      if (series) {
        checkVersion(series, { cutId: upload.cutId, type: file.rule.type });
        checkKeptPath(series, upload.path);
        const number = await this.repository.nextVersion(tx, series.seriesId);
        if (number === null) throw notFound('File');
        version = { id: series.seriesId, version: number };
        // Read again under the series lock: a version recorded meanwhile is now the latest.
        name ??= (await this.repository.seriesOf(tx, { seriesId: series.seriesId }))?.latestName ?? series.latestName;
        // Another path moves the series (§16); the unique index refuses one another series holds.
        if (upload.path !== null) await this.repository.movePath(tx, series.seriesId, { path: upload.path, key: filePathKey(upload.path) });
      }
      await this.pending.settle(tx, file.key);
      await this.repository.insert(tx, {
        id,
        cutId,
        projectId,
        name: name ?? upload.originalName,
        extension: file.rule.extension,
        type: file.rule.type,
        size: file.size,
        mimeType: file.rule.mimeType,
        sha256: file.sha256,
        uploadedBy: principal.userId,
        series: version,
        ...(upload.path === null ? {} : { path: { path: upload.path, key: filePathKey(upload.path) } }),
      });
      const record = toFileRecord((await this.repository.find(tx, id))!);
      await alsoRecord?.(tx, record);
      // Once both are written: a resumable upload that completes here stops holding its length as it starts to count as a file.
      await this.admission.checkQuotaInTransaction(tx, principal, 0);
      await this.events.publish(tx, projectEvent(principal, projectId, 'file.uploaded', { file: record }));
      // Under a policy of no approvals a new version can be ready as it lands.
      await this.gate.settle(tx, principal, { id });
      return record;
    });
  }

  /** Every remaining version of a file's series, oldest first. */
  async versions(principal: Principal, id: string): Promise<FileVersions> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.access.require(principal, 'file', id, 'MEMBER', tx);
      const series = await this.repository.seriesOf(tx, { fileId: id });
      if (!series) throw notFound('File');
      const rows = await this.repository.versions(tx, series.seriesId);
      return { seriesId: series.seriesId, versions: rows.map(toFileRecord) };
    });
  }

  async get(principal: Principal, id: string): Promise<FileRecord> {
    return toFileRecord(await this.row(principal, id));
  }

  /** The waveform of a file the caller may read. */
  async peaks(principal: Principal, id: string): Promise<Waveform> {
    await this.access.require(principal, 'file', id);
    return this.peaksOf(id);
  }

  /** A CUT's waveform: 409 while its analysis is pending, 404 when there is none (not audio, or failed). */
  async peaksOf(id: string): Promise<Waveform> {
    const found = await this.repository.findPeaks(this.sql, id);
    if (!found) throw notFound('File');
    if (found.type === 'CUT' && found.analysis === 'pending') {
      throw new DomainError('ANALYSIS_PENDING', 'The file has not been analysed yet; try again shortly');
    }
    if (!found.peaks) throw notFound('Waveform');
    return found.peaks;
  }

  /**
   * A page of a STEM ZIP's entries from `cursor` (an entry's position) on: 409 while its analysis is pending,
   * 404 when it has no entries (not a STEM, or its ZIP could not be read). One more row than the page is
   * read to tell whether another page follows.
   */
  async stemEntries(principal: Principal, id: string, page: { cursor?: string; limit: number }): Promise<StemEntriesPage> {
    await this.access.require(principal, 'file', id);
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      const found = await this.repository.findAnalysis(tx, id);
      if (!found) throw notFound('File');
      if (found.type === 'STEM' && found.analysis === 'pending') {
        throw new DomainError('ANALYSIS_PENDING', 'The file has not been analysed yet; try again shortly');
      }
      if (found.type !== 'STEM' || found.analysis !== 'done') throw notFound('Stem entries');
      const rows = await this.repository.findStemEntries(tx, id, Number(page.cursor ?? 0), page.limit + 1);
      const next = rows.length > page.limit ? rows[page.limit]! : null;
      return {
        entries: rows.slice(0, page.limit).map((row) => toStemEntry(id, row)),
        nextCursor: next === null ? null : String(next.position),
      };
    });
  }

  /** The waveforms of those of `ids` that have one (the share pages draw them). */
  waveforms(ids: string[]): Promise<Map<string, Waveform>> {
    return this.repository.findWaveforms(this.sql, ids);
  }

  /** The bytes of a file the caller may read. */
  async bytes(principal: Principal, id: string): Promise<StoredBytes> {
    return this.bytesOf(await this.storedRow(principal, id));
  }

  /** The same through a media path's `<id>.<ext>`; an extension that is not the file's names nothing. */
  async bytesByStoredName(principal: Principal, storedName: string): Promise<StoredBytes> {
    const match = STORED_NAME.exec(storedName);
    if (!match) throw notFound('File');
    const row = await this.storedRow(principal, match[1]!);
    if (row.extension !== match[2]) throw notFound('File');
    return this.bytesOf(row);
  }

  /** What a download of a file row sends; the download name is the display name plus its extension. */
  bytesOf(row: StoredFileRow): StoredBytes {
    const extension = `.${row.extension}`;
    const key = storeKeys.file(row.id, row.extension);
    return {
      key,
      read: (range) => this.store.read(key, range),
      openReader: (range) => this.store.openReader(key, range),
      downloadUrl: (headers) => this.store.downloadUrl(key, headers),
      size: row.size,
      mimeType: row.mimeType,
      etag: `"${row.sha256}"`,
      modifiedAt: row.createdAt,
      downloadName: row.name.toLowerCase().endsWith(extension) ? row.name : `${row.name}${extension}`,
    };
  }

  /** The listening preview of a file the caller may read (§20). */
  async preview(principal: Principal, id: string): Promise<StoredBytes> {
    return this.previewOf(await this.storedRow(principal, id));
  }

  /**
   * The listening preview of a STEM ZIP's entry (§20, PREVIEW_STEMS), by its index: as a file's preview (409
   * while pending, 404 without one, made again when its bytes are gone), its ETag the ZIP's sha256 with the index.
   */
  async entryPreview(principal: Principal, id: string, index: string): Promise<StoredBytes> {
    const row = await this.storedRow(principal, id);
    const position = /^\d{1,9}$/.test(index) ? Number(index) : null;
    const entry = position === null || row.type !== 'STEM' ? null : await this.repository.findStemEntry(this.sql, id, position);
    if (position === null || !entry) throw notFound('Stem entry');
    if (entry.preview === 'pending') throw previewNotReady();
    if (entry.preview !== 'done' || entry.previewBytes === null) throw notFound('Preview');
    const stem = path.posix.basename(entry.path).replace(/\.[^./]{1,5}$/, '');
    return this.previewBytes(storeKeys.entryPreview(id, position), (tx) => this.previews.remakeEntry(tx, id, position), {
      size: entry.previewBytes,
      etag: `"${row.sha256}-preview-${position}"`,
      modifiedAt: row.createdAt,
      downloadName: `${stem}.m4a`,
    });
  }

  /**
   * What a preview's download sends: 409 PREVIEW_NOT_READY (Retry-After) while it is pending, 404 when there is
   * none (not a CUT, or its audio could not be decoded). Its ETag is the original's sha256 with a suffix: a new
   * version is another file, and a preview made again is of the same bytes. A preview made whose bytes are gone
   * from the store (lost, or a store switched without them) is made again: its file turns `pending`, its job is
   * queued, and this answer is the 409 of a preview being made (a preview is derived from its file: nothing is
   * lost, where a missing original is a 404).
   */
  previewOf(row: StoredFileRow): StoredBytes {
    if (row.preview === 'pending') throw previewNotReady();
    if (row.preview !== 'done' || row.previewBytes === null) throw notFound('Preview');
    const stem = row.name.replace(/\.[^./]{1,5}$/, '');
    return this.previewBytes(storeKeys.preview(row.id), (tx) => this.previews.remake(tx, row.id), {
      size: row.previewBytes,
      etag: `"${row.sha256}-preview"`,
      modifiedAt: row.createdAt,
      downloadName: `${stem}.m4a`,
    });
  }

  /** A made preview's bytes at `key`; when they are gone from the store, `remake` queues it again and the answer is 409. */
  private previewBytes(key: string, remake: (tx: Tx) => Promise<void>, facts: Pick<StoredBytes, 'size' | 'etag' | 'modifiedAt' | 'downloadName'>): StoredBytes {
    return {
      key,
      read: (range) => this.store.read(key, range),
      openReader: async (range) => {
        try {
          return await this.store.openReader(key, range);
        } catch (error) {
          if (!(error instanceof ObjectMissing)) throw error;
          await this.sql.begin(remake);
          throw previewNotReady();
        }
      },
      mimeType: 'audio/mp4',
      ...facts,
    };
  }

  /** The uploader or a project ADMIN; the bytes go once the row's deletion has committed. */
  async delete(principal: Principal, id: string): Promise<Date | null> {
    const { removed, trashedUntil } = await this.sql.begin(async (tx) => {
      const { projectId, role } = await this.access.require(principal, 'file', id, 'MEMBER', tx);
      const file = await this.repository.lockForDelete(tx, id);
      if (!file) throw notFound('File');
      if (file.uploadedBy !== principal.userId && role !== 'ADMIN') {
        throw forbidden('Only the uploader or a project ADMIN can delete this file');
      }
      if (this.trash.enabled) {
        const until = await this.trash.move(tx, principal, { kind: 'file', id, projectId });
        await this.events.publish(tx, projectEvent(principal, projectId, 'file.trashed', { fileId: id, cutId: file.cutId, trashedUntil: until.toISOString() }));
        return { removed: null, trashedUntil: until };
      }
      const removed = await this.repository.delete(tx, id);
      await this.events.publish(tx, projectEvent(principal, projectId, 'file.deleted', { fileId: id, cutId: file.cutId }));
      return { removed, trashedUntil: null };
    });
    if (removed) await this.objects.removeFile(removed);
    return trashedUntil;
  }

  /**
   * Deletes every version of a file's series: a project ADMIN, or a member who uploaded each of them. The
   * versions' comments and reviews go with them; the bytes go once the deletion has committed.
   */
  async deleteSeries(principal: Principal, id: string): Promise<DeletedSeries> {
    const { seriesId, removed, stored, trashedUntil } = await this.sql.begin(async (tx) => {
      const { projectId, role } = await this.access.require(principal, 'file', id, 'MEMBER', tx);
      const series = await this.repository.seriesOf(tx, { fileId: id });
      if (!series) throw notFound('File');
      const versions = await this.repository.lockSeriesForDelete(tx, series.seriesId);
      if (role !== 'ADMIN' && versions.some((version) => version.uploadedBy !== principal.userId)) {
        throw forbidden('Only a project ADMIN, or a member who uploaded every version, can delete the whole series');
      }
      if (this.trash.enabled) {
        const until = await this.trash.move(tx, principal, { kind: 'series', id: series.seriesId, projectId });
        for (const version of versions) {
          await this.events.publish(tx, projectEvent(principal, projectId, 'file.trashed', { fileId: version.id, cutId: version.cutId, trashedUntil: until.toISOString() }));
        }
        return { seriesId: series.seriesId, removed: versions.length, stored: [], trashedUntil: until };
      }
      const stored = await this.repository.deleteSeries(tx, series.seriesId);
      for (const version of versions) {
        await this.events.publish(tx, projectEvent(principal, projectId, 'file.deleted', { fileId: version.id, cutId: version.cutId }));
      }
      return { seriesId: series.seriesId, removed: versions.length, stored, trashedUntil: null };
    });
    if (trashedUntil !== null) return { seriesId, deleted: removed, ...trashed(trashedUntil) };
    for (const file of stored) await this.objects.removeFile(file);
    return { seriesId, deleted: removed };
  }

  /**
   * Start-up, before the server listens: creates the storage directories and tightens modes. It deletes and
   * moves nothing: other instances may share the store, and what looks left over may be their work in flight.
   */
  async prepareStorage(): Promise<void> {
    await this.local.prepare();
  }

  /**
   * Run by the purge job, on whichever instance: removes the bytes the `removed_bytes` ledger lists (a committed
   * delete whose removal failed, or whose server died before it), the objects the `pending_objects` ledger has
   * listed for a day (their server died between the object and its row: PendingObjects), temporary uploads
   * untouched for STRAY_AGE_MS (their server died mid-upload; a live upload writes far more often), and the
   * stored_images rows of images no project, vibe or account took within that time (their bytes are then
   * orphans, for the `orphans` command).
   */
  async removeLeftovers(): Promise<{ removedBytes: number; pendingObjects: number; temporary: number }> {
    const done: RemovedBytes[] = [];
    let removedBytes = 0;
    for (const entry of await this.repository.removedBytes()) {
      const key = entry.dir === 'images' ? storeKeys.image(entry.name) : `${entry.dir}/${path.basename(entry.name)}`;
      // A file's preview (§20) goes with it (a failure to remove it is logged, for the `orphans` command).
      if (!entry.referenced && entry.dir === 'files') await this.objects.removeQuietly(storeKeys.preview(path.basename(entry.name).split('.')[0]!));
      if (!entry.referenced && (await this.objects.exists(key)) && (await this.objects.removeQuietly(key))) removedBytes++;
      // A removal that failed (logged) keeps its entry: the next round tries again.
      if (entry.referenced || !(await this.objects.exists(key))) done.push(entry);
    }
    await this.repository.forgetRemoved(done);
    const pendingObjects = await this.pending.purgeStale();
    const temporary = await this.local.removeStaleTemp(STRAY_AGE_MS);
    await this.repository.dropUntakenImages(STRAY_AGE_MS / 1000);
    return { removedBytes, pendingObjects, temporary };
  }

  private async row(principal: Principal, id: string): Promise<FileRow> {
    await this.access.require(principal, 'file', id);
    const row = await this.repository.find(this.sql, id);
    if (!row) throw notFound('File');
    return row;
  }

  /** A download reads only what it sends (no uploader, no stems). */
  private async storedRow(principal: Principal, id: string): Promise<StoredFileRow> {
    await this.access.require(principal, 'file', id);
    const row = await this.repository.findStored(this.sql, id);
    if (!row) throw notFound('File');
    return row;
  }
}

const previewNotReady = (): DomainError => new DomainError('PREVIEW_NOT_READY', 'The preview has not been made yet; try again shortly', { retryAfterSeconds: 5 });
