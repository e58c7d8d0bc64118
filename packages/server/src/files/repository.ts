import type { AnalysisStatus, FileRecord, FileType, PreviewInfo, PreviewStatus, RequestedReview, ReviewPolicy, StemEntry, Stems, Waveform } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { type DeletedFile, deletedFileColumns } from '../core/stored-objects.js';
import { avatarUrl } from '../images/repository.js';
import { storeKeys } from '../core/store/index.js';
import { JOB_KINDS } from '../core/job-kinds.js';
import { enqueue } from '../core/jobs-repository.js';
import type { StoredAudio, StoredEntryPreview, StoredStems } from '../analysis/repository.js';
import { enqueueEarlyPreview, previewInfoOf } from '../previews/repository.js';

/** A stored file's key, `files/<uuid>.<ext>`: its id. */
const STORED_FILE_KEY = /^files\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.[^/]+$/;
/** A preview's key, a file's `previews/<uuid>.m4a` or a STEM entry's `previews/<uuid>.<position>.m4a`: its file's id. */
const PREVIEW_KEY = /^previews\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\.\d+)?\.m4a$/;

/** A `files` row as downloads, archives and share links use it: what they show and send, no more. */
export interface StoredFileRow {
  id: string;
  cutId: string;
  projectId: string;
  name: string;
  extension: string;
  type: FileType;
  size: number;
  mimeType: string;
  sha256: string;
  createdAt: Date;
  analysis: AnalysisStatus;
  /** AudioInfo as stored: the peaks URL is derived from the id. */
  audio: StoredAudio | null;
  seriesId: string;
  version: number;
  /** The listening preview (§20): its state, and its facts once done. */
  preview: PreviewStatus;
  previewBytes: number | null;
  previewBitrate: number | null;
  previewDurationMs: number | null;
}

/** A `files` row joined with its uploader, as every query that returns File records selects it. */
export interface FileRow extends StoredFileRow {
  /** The series' path in the cut's folder (§16); null when it has none. */
  path: string | null;
  /** Null once the uploader's account is deleted: the file stays, shown as a former member's. */
  uploaderId: string | null;
  uploaderName: string | null;
  /** The stored avatar's name (`<uuid>.<ext>`), if the uploader has one. */
  uploaderAvatar: string | null;
  stems: StoredStems | null;
  /** The highest remaining version of the series and how many remain. */
  latestVersion: number;
  seriesCount: number;
  /** This version's reviews, and the open top-level comments of the whole series. */
  approved: number;
  changesRequested: number;
  openComments: number;
  /** The project's review policy, and whether the version met it when the gate last settled (files/review-gate.ts). */
  reviewPolicy: ReviewPolicy;
  reviewReady: boolean;
  /** The members asked to review this version (§19), oldest request first. */
  reviewRequests: RequestedReview[];
}

/** What readiness is computed from: the version's review counts and its series' open comments. */
export interface ReviewCounts {
  approved: number;
  changesRequested: number;
  openComments: number;
}

/** The one definition of ready under a review policy (§19), behind File.review, the reviews summary and the gate. */
export function reviewReady(counts: ReviewCounts, policy: ReviewPolicy): boolean {
  return counts.approved >= policy.approvals && counts.changesRequested === 0 && (!policy.noOpenComments || counts.openComments === 0);
}

/** A stem_entries row, as GET /api/files/:id/entries reads it. */
export interface StemEntryRow {
  position: number;
  path: string;
  size: number;
  audio: StemEntry['audio'];
  preview: StoredEntryPreview['status'] | null;
  previewBytes: number | null;
  previewBitrate: number | null;
  previewDurationMs: number | null;
}

/** An entry's PreviewInfo: null when it gets none; its URL names the file and the entry's position. */
function entryPreviewInfo(fileId: string, position: number, stored: StoredEntryPreview | null): PreviewInfo | null {
  if (stored === null) return null;
  const url = `/api/files/${fileId}/entries/${position}/preview`;
  return previewInfoOf({ preview: stored.status, previewBytes: stored.bytes, previewBitrate: stored.bitrate, previewDurationMs: stored.durationMs }, url);
}

/** The one mapping of a stem_entries row to the API's StemEntry. */
export function toStemEntry(fileId: string, row: StemEntryRow): StemEntry {
  const stored = row.preview === null ? null : { status: row.preview, bytes: row.previewBytes, bitrate: row.previewBitrate, durationMs: row.previewDurationMs };
  return { path: row.path, size: row.size, audio: row.audio, preview: entryPreviewInfo(fileId, row.position, stored) };
}

/** The File record's stems: the stored copy of the first entries (position = index), with their previews' URLs. */
function toStems(fileId: string, stems: StoredStems | null): Stems | null {
  if (stems === null) return null;
  const entries = stems.entries.map((entry, position) => ({ path: entry.path, size: entry.size, audio: entry.audio, preview: entryPreviewInfo(fileId, position, entry.preview ?? null) }));
  return { ...stems, entries };
}

/** Who uploaded a file whose uploader deleted their account. */
const FORMER_MEMBER = { id: null, name: 'Former member', avatarUrl: null };

const fileUrl = (id: string, extension: string): string => `/uploads/files/${id}.${extension}`;

/** The one mapping of a file row to the API's File record. */
export function toFileRecord(row: FileRow): FileRecord {
  return {
    id: row.id,
    cutId: row.cutId,
    name: row.name,
    path: row.path,
    type: row.type,
    size: row.size,
    mimeType: row.mimeType,
    url: fileUrl(row.id, row.extension),
    sha256: row.sha256,
    uploadedBy:
      row.uploaderId === null
        ? FORMER_MEMBER
        : { id: row.uploaderId, name: row.uploaderName!, avatarUrl: avatarUrl(row.uploaderAvatar) },
    createdAt: row.createdAt.toISOString(),
    analysis: row.analysis,
    audio: row.audio ? { ...row.audio, peaksUrl: `/api/files/${row.id}/peaks` } : null,
    preview: previewInfoOf(row, `/api/files/${row.id}/preview`),
    stems: toStems(row.id, row.stems),
    series: { id: row.seriesId, version: row.version, latest: row.version === row.latestVersion, count: row.seriesCount },
    review: { approved: row.approved, changesRequested: row.changesRequested, openComments: row.openComments, ready: reviewReady(row, row.reviewPolicy) },
    reviewRequests: row.reviewRequests,
  };
}

/** Which files to read: one file, the versions of a series, the files of some cuts, or every file of a project. */
export type FileFilter = { id: string } | { seriesId: string } | { cutIds: string[] } | { projectId: string };

/** `latest`: only the highest remaining version of each series (`?latest=true`, archives). */
export interface FileSelection {
  latest?: boolean;
}

const fileCondition = (tx: Queryable, filter: FileFilter, { latest = false }: FileSelection) => {
  const which =
    'id' in filter
      ? tx`f.id = ${filter.id}`
      : 'seriesId' in filter
        ? tx`f.series_id = ${filter.seriesId}`
        : 'cutIds' in filter
          ? tx`f.cut_id = any(${filter.cutIds}::uuid[])`
          : tx`f.project_id = ${filter.projectId}`;
  return latest ? tx`${which} and not exists (select 1 from files newer where newer.series_id = f.series_id and newer.version > f.version)` : which;
};

/**
 * File rows with their uploader, series and review counts, oldest first (a series by version): the one query
 * behind every File record (files, versions, cuts, projects). The counts are correlated subqueries over
 * indexed columns (files by series, reviews by file, comments by file), so a cut of any size is one round trip.
 */
export async function findFileRows(tx: Queryable, filter: FileFilter, selection: FileSelection = {}): Promise<FileRow[]> {
  return tx<FileRow[]>`
    select f.id, f.cut_id, f.project_id, f.name, f.extension, f.type, f.size, f.mime_type, f.sha256, f.created_at,
           f.analysis, f.audio, f.stems, f.series_id, f.version, s.path, f.review_ready,
           json_build_object('approvals', p.review_approvals, 'noOpenComments', p.review_no_open_comments) as review_policy,
           f.preview, f.preview_bytes, f.preview_bitrate, f.preview_duration_ms,
           u.id as uploader_id, u.name as uploader_name, u.avatar as uploader_avatar,
           series.latest_version, series.series_count,
           coalesce(reviewed.approved, 0) as approved, coalesce(reviewed.changes_requested, 0) as changes_requested,
           (select count(*)::int from comments c join files v on v.id = c.file_id
            where v.series_id = f.series_id and c.parent_id is null and not c.deleted and c.resolved_at is null) as open_comments,
           (select coalesce(json_agg(json_build_object(
                     'userId', rr.user_id, 'name', ru.name,
                     'requestedBy', json_build_object('id', rr.requested_by, 'name', coalesce(rb.name, 'Former member')),
                     'at', to_char(rr.requested_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                   order by rr.requested_at, ru.name), '[]'::json)
            from review_requests rr join users ru on ru.id = rr.user_id left join users rb on rb.id = rr.requested_by
            where rr.file_id = f.id) as review_requests
    from files f
    join file_series s on s.id = f.series_id
    join projects p on p.id = f.project_id
    left join users u on u.id = f.uploaded_by
    cross join lateral (select max(v.version)::int as latest_version, count(*)::int as series_count from files v where v.series_id = f.series_id) series
    left join lateral (
      select count(*) filter (where r.state = 'approved')::int as approved,
             count(*) filter (where r.state = 'changes_requested')::int as changes_requested
      from reviews r where r.file_id = f.id) reviewed on true
    where ${fileCondition(tx, filter, selection)}
    order by ${'seriesId' in filter ? tx`f.version` : tx`f.created_at, f.id`}`;
}

/**
 * The same files without uploader, stems or counts, oldest first: for archives and share links, which show
 * none of them (a link is anonymous, and a STEM's entries are not part of what it shows).
 */
export async function findStoredFileRows(tx: Queryable, filter: FileFilter, selection: FileSelection = {}): Promise<StoredFileRow[]> {
  return tx<StoredFileRow[]>`
    select f.id, f.cut_id, f.project_id, f.name, f.extension, f.type, f.size, f.mime_type, f.sha256, f.created_at,
           f.analysis, f.audio, f.series_id, f.version, f.preview, f.preview_bytes, f.preview_bitrate, f.preview_duration_ms
    from files f
    where ${fileCondition(tx, filter, selection)}
    order by f.created_at, f.id`;
}

/**
 * A file to record: the row's own columns, with its uploader's id; with a series, it is that version of it, else
 * it starts a series, at `path` when it has one.
 */
export type NewFile = Pick<StoredFileRow, 'id' | 'cutId' | 'projectId' | 'name' | 'extension' | 'type' | 'size' | 'mimeType' | 'sha256'> & {
  uploadedBy: string;
  series?: { id: string; version: number };
  path?: SeriesPath;
};

/** A series' path (§16) and what paths are compared by (`filePathKey`). */
export interface SeriesPath {
  path: string;
  key: string;
}

/** Migration 028's unique index: one series per path key in a cut. */
const PATH_INDEX = 'file_series_cut_path_key';

/** Whether a database error is a path already taken in the cut (another series holds its key). */
export const isPathTaken = (error: unknown): boolean =>
  (error as { code?: string; constraint_name?: string }).code === '23505' && (error as { constraint_name?: string }).constraint_name === PATH_INDEX;

/** The series a file belongs to, with what an upload of its next version is checked against. */
export interface SeriesOfFile {
  seriesId: string;
  cutId: string;
  type: FileType;
  /** The highest remaining version: an unchanged upload names it, and a new version takes its display name. */
  latestId: string;
  latestSha256: string;
  latestName: string;
  /** The series' path (§16); null when it has none. */
  path: string | null;
}

/** The columns the delete rule and the disk cleanup need. */
export interface FileOwnership {
  cutId: string;
  extension: string;
  uploadedBy: string | null;
}

@injectable()
export class FilesRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Takes a key-share lock on the cut, the lock the files foreign key takes: a concurrent delete of the cut
   * waits for this transaction, and a delete that committed first leaves nothing to lock (false).
   */
  async lockCut(tx: Queryable, cutId: string): Promise<boolean> {
    const rows = await tx`select 1 from cuts where id = ${cutId} for key share`;
    return rows.length > 0;
  }

  /** One file with its uploader; null when it is gone. */
  async find(tx: Queryable, id: string): Promise<FileRow | null> {
    const [row] = await findFileRows(tx, { id });
    return row ?? null;
  }

  /** One file as a download or a link sends it; null when it is gone. */
  async findStored(tx: Queryable, id: string): Promise<StoredFileRow | null> {
    const [row] = await findStoredFileRows(tx, { id });
    return row ?? null;
  }

  /**
   * Records a file; audio (CUT) and stems (STEM) also get an analysis job, in the same transaction, so
   * every way a file gets recorded feeds it. Images are never analysed.
   */
  async insert(tx: Queryable, { series, path, ...file }: NewFile): Promise<void> {
    const analysed = file.type === 'CUT' || file.type === 'STEM';
    // Without a series the insert trigger starts one (021_versions_comments_reviews.sql); one with a path starts here.
    if (!series && path) await tx`insert into file_series (id, cut_id, path, path_key) values (${file.id}, ${file.cutId}, ${path.path}, ${path.key})`;
    const versioned = series ? { seriesId: series.id, version: series.version } : path ? { seriesId: file.id, version: 1 } : {};
    // A CUT's preview is queued when its analysis is done (analysis/worker.ts), which gives its duration, and at
    // once when its header bounds its length (previews/repository.ts).
    await tx`insert into files ${tx({ ...file, ...versioned, analysis: analysed ? 'pending' : 'unsupported', preview: file.type === 'CUT' ? 'pending' : 'none' })}`;
    // Round-robin by uploader: one account's many files never hold the queue from another's one (§12).
    if (analysed) await enqueue(tx, JOB_KINDS.analysis, { fileId: file.id }, { key: `analysis:${file.id}`, fairKey: file.uploadedBy });
    await enqueueEarlyPreview(tx, file);
  }

  /** The series of a file (or a series by its id) and its latest version; null when it is gone or has no version left. */
  async seriesOf(tx: Queryable, which: { fileId: string } | { seriesId: string }): Promise<SeriesOfFile | null> {
    const seriesId = 'fileId' in which ? tx`(select series_id from files where id = ${which.fileId})` : tx`${which.seriesId}::uuid`;
    const [row] = await tx<SeriesOfFile[]>`
      select f.series_id, f.cut_id, f.type, f.id as latest_id, f.sha256 as latest_sha256, f.name as latest_name, s.path
      from files f join file_series s on s.id = f.series_id
      where f.series_id = ${seriesId}
      order by f.version desc limit 1`;
    return row ?? null;
  }

  /** The series at a path of a cut (by its key) and its latest version; null when the path is free. */
  async seriesAtPath(tx: Queryable, cutId: string, key: string): Promise<{ seriesId: string; latestId: string } | null> {
    const [row] = await tx<{ seriesId: string; latestId: string }[]>`
      select s.id as series_id, f.id as latest_id
      from file_series s join files f on f.series_id = s.id
      where s.cut_id = ${cutId} and s.path_key = ${key}
      order by f.version desc limit 1`;
    return row ?? null;
  }

  /** Moves a series to a path (a rename, §16); a path another series of the cut holds fails on PATH_INDEX. */
  async movePath(tx: Queryable, seriesId: string, path: SeriesPath): Promise<void> {
    await tx`update file_series set path = ${path.path}, path_key = ${path.key} where id = ${seriesId}`;
  }

  /**
   * The next version number of a series; null when the series is gone. The update's row lock orders concurrent
   * uploads of one series until their transactions end, so each gets its own consecutive number, and
   * `last_version` never goes down, so a deleted version's number is not given again.
   */
  async nextVersion(tx: Queryable, seriesId: string): Promise<number | null> {
    const [row] = await tx<{ lastVersion: number }[]>`
      update file_series set last_version = last_version + 1 where id = ${seriesId} returning last_version`;
    return row?.lastVersion ?? null;
  }

  /** Every version of a series, oldest first, with their uploaders: the versions list. */
  async versions(tx: Queryable, seriesId: string): Promise<FileRow[]> {
    return findFileRows(tx, { seriesId });
  }

  /** Locks every version of a series for a delete; their ownership, oldest first. */
  async lockSeriesForDelete(tx: Queryable, seriesId: string): Promise<(FileOwnership & { id: string })[]> {
    return tx<(FileOwnership & { id: string })[]>`
      select id, cut_id, extension, uploaded_by from files where series_id = ${seriesId} order by version for update`;
  }

  /** Deletes a series with its versions (their comments and reviews go with them); what they stored. */
  async deleteSeries(tx: Queryable, seriesId: string): Promise<DeletedFile[]> {
    const removed = await tx<DeletedFile[]>`delete from files where series_id = ${seriesId} returning ${deletedFileColumns(tx)}`;
    await tx`delete from file_series where id = ${seriesId}`;
    return [...removed];
  }

  /** The waveform of a file and where its analysis stands; null when the file is gone. */
  async findPeaks(tx: Queryable, id: string): Promise<{ type: FileType; analysis: AnalysisStatus; peaks: Waveform | null } | null> {
    const [row] = await tx<{ type: FileType; analysis: AnalysisStatus; peaks: Waveform | null }[]>`
      select type, analysis, peaks from files where id = ${id}`;
    return row ?? null;
  }

  /** Where a file's analysis stands: what its entries need to know; null when the file is gone. */
  async findAnalysis(tx: Queryable, id: string): Promise<{ type: FileType; analysis: AnalysisStatus } | null> {
    const [row] = await tx<{ type: FileType; analysis: AnalysisStatus }[]>`select type, analysis from files where id = ${id}`;
    return row ?? null;
  }

  /** Up to `limit` entries of a STEM ZIP from `position` on, in the ZIP's order, with their positions. */
  async findStemEntries(tx: Queryable, id: string, position: number, limit: number): Promise<StemEntryRow[]> {
    return tx<StemEntryRow[]>`
      select position, path, size, audio, preview, preview_bytes, preview_bitrate, preview_duration_ms from stem_entries
      where file_id = ${id} and position >= ${position}
      order by position
      limit ${limit}`;
  }

  /** A STEM ZIP's entry at `position`: its path and its preview's state; null when there is none. */
  async findStemEntry(tx: Queryable, id: string, position: number): Promise<Pick<StemEntryRow, 'path' | 'preview' | 'previewBytes'> | null> {
    const [row] = await tx<Pick<StemEntryRow, 'path' | 'preview' | 'previewBytes'>[]>`
      select path, preview, preview_bytes from stem_entries where file_id = ${id} and position = ${position}`;
    return row ?? null;
  }

  /** The waveforms of those of `ids` that have one, by file id. */
  async findWaveforms(tx: Queryable, ids: string[]): Promise<Map<string, Waveform>> {
    const rows = await tx<{ id: string; peaks: Waveform }[]>`select id, peaks from files where id = any(${ids}::uuid[]) and peaks is not null`;
    return new Map(rows.map((row) => [row.id, row.peaks]));
  }

  async lockForDelete(tx: Queryable, id: string): Promise<FileOwnership | null> {
    const [row] = await tx<FileOwnership[]>`select cut_id, extension, uploaded_by from files where id = ${id} for update`;
    return row ?? null;
  }

  /** Deletes a file; what it stored (null: gone already). */
  async delete(tx: Queryable, id: string): Promise<DeletedFile | null> {
    const [removed] = await tx<DeletedFile[]>`delete from files where id = ${id} returning ${deletedFileColumns(tx)}`;
    return removed ?? null;
  }

  /**
   * Drops the stored_images rows older than `ageSeconds` that no project, vibe or account took (a crash
   * between storing and recording); younger ones may be an upload in flight on any instance.
   */
  async dropUntakenImages(ageSeconds: number): Promise<void> {
    await this.sql`
      delete from stored_images s
      where s.created_at < now() - make_interval(secs => ${ageSeconds})
        and not exists (select 1 from image_references r where r.name = s.name)`;
  }

  /** Those of `keys` (stored keys, `files/<id>.<ext>`, `images/<name>`) that a row refers to. */
  async referencedAmong(keys: readonly string[]): Promise<Set<string>> {
    const ids = keys.flatMap((key) => STORED_FILE_KEY.exec(key)?.[1] ?? []);
    const previewIds = keys.flatMap((key) => PREVIEW_KEY.exec(key)?.[1] ?? []);
    const names = keys.filter((key) => key.startsWith('images/')).map((key) => key.slice('images/'.length));
    const files = ids.length === 0 ? [] : await this.sql<{ id: string; extension: string }[]>`select id, extension from public.files where id = any(${this.sql.array(ids)}::uuid[])`;
    // A preview (a file's, or one of its STEM entries') is its file's whatever the preview state says (trashed
    // files' included): one being made is written before its row says `done`, and one made again overwrites its
    // key. Only a preview whose file is gone is an orphan.
    const previewed =
      previewIds.length === 0 ? [] : await this.sql<{ id: string }[]>`select id from public.files where id = any(${this.sql.array(previewIds)}::uuid[])`;
    const livingFiles = new Set(previewed.map((row) => row.id));
    const previews = keys.filter((key) => livingFiles.has(PREVIEW_KEY.exec(key)?.[1] ?? ''));
    const images =
      names.length === 0
        ? []
        : await this.sql<{ name: string }[]>`select distinct name from image_references where name = any(${this.sql.array(names)}::text[])`;
    return new Set([
      ...files.map((row) => storeKeys.file(row.id, row.extension)),
      ...previews,
      ...images.map((row) => storeKeys.image(row.name)),
    ]);
  }

  /** How many stored keys rows refer to. */
  async storedKeyCount(): Promise<number> {
    const [row] = await this.sql<{ count: number }[]>`
      select (select count(*) from public.files)::int + (select count(*) from public.files where preview = 'done')::int
        + (select count(*) from public.stem_entries where preview = 'done')::int
        + (select count(distinct name) from image_references)::int as count`;
    return row!.count;
  }

  /**
   * The bytes whose records committed deletes removed (the removed_bytes ledger), a batch at a time, each with
   * whether a row refers to that name again (then its bytes stay).
   */
  async removedBytes(): Promise<RemovedBytes[]> {
    return [
      ...(await this.sql<RemovedBytes[]>`
        select r.dir, r.name,
          case r.dir
            when 'files' then exists (select 1 from public.files f where f.id = split_part(r.name, '.', 1)::uuid)
            -- An entry's preview (<file id>.<position>.m4a) is its entry's again when a new analysis listed it.
            when 'previews' then exists (select 1 from public.stem_entries e where e.file_id = split_part(r.name, '.', 1)::uuid
                                                                              and e.position = split_part(r.name, '.', 2)::int)
            else exists (select 1 from image_references i where i.name = r.name)
          end as referenced
        from removed_bytes r
        limit ${REMOVED_BYTES_BATCH}`),
    ];
  }

  /** Takes from the ledger the entries the purge has dealt with (and only those: deletes go on meanwhile). */
  async forgetRemoved(entries: RemovedBytes[]): Promise<void> {
    if (entries.length === 0) return;
    await this.sql`
      delete from removed_bytes r
      using unnest(${this.sql.array(entries.map((e) => e.dir))}::text[], ${this.sql.array(entries.map((e) => e.name))}::text[]) as done(dir, name)
      where r.dir = done.dir and r.name = done.name`;
  }
}

/** An entry of the removed_bytes ledger. */
export interface RemovedBytes {
  dir: 'files' | 'images' | 'previews';
  name: string;
  /** A row refers to the name again: its bytes are not garbage. */
  referenced: boolean;
}

/** Ledger entries one purge round deals with; the next round takes the rest. */
const REMOVED_BYTES_BATCH = 1000;
