import type { AnalysisStatus, AudioInfo, FileRecord, FileType, StemEntry, Stems, Waveform } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { avatarUrl } from '../images/repository.js';

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
}

/** A `files` row joined with its uploader, as every query that returns File records selects it. */
export interface FileRow extends StoredFileRow {
  /** Null once the uploader's account is deleted: the file stays, shown as a former member's. */
  uploaderId: string | null;
  uploaderName: string | null;
  /** The stored avatar's name (`<uuid>.<ext>`), if the uploader has one. */
  uploaderAvatar: string | null;
  stems: Stems | null;
}

export type StoredAudio = Omit<AudioInfo, 'peaksUrl'>;

/** How many of a STEM ZIP's entries its File record lists; the rest are paged from GET /api/files/:id/entries. */
export const STEM_ENTRIES_IN_RECORD = 100;

/** Who uploaded a file whose uploader deleted their account. */
const FORMER_MEMBER = { id: null, name: 'Former member', avatarUrl: null };

const fileUrl = (id: string, extension: string): string => `/uploads/files/${id}.${extension}`;

/** The one mapping of a file row to the API's File record. */
export function toFileRecord(row: FileRow): FileRecord {
  return {
    id: row.id,
    cutId: row.cutId,
    name: row.name,
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
    stems: row.stems,
  };
}

/** Which files to read: one file, the files of some cuts, or every file of a project. */
export type FileFilter = { id: string } | { cutIds: string[] } | { projectId: string };

const fileCondition = (tx: Queryable, filter: FileFilter) =>
  'id' in filter
    ? tx`f.id = ${filter.id}`
    : 'cutIds' in filter
      ? tx`f.cut_id = any(${filter.cutIds}::uuid[])`
      : tx`f.project_id = ${filter.projectId}`;

/** File rows with their uploader, oldest first: the one query behind every File record (files, cuts, projects). */
export async function findFileRows(tx: Queryable, filter: FileFilter): Promise<FileRow[]> {
  return tx<FileRow[]>`
    select f.id, f.cut_id, f.project_id, f.name, f.extension, f.type, f.size, f.mime_type, f.sha256, f.created_at,
           f.analysis, f.audio, f.stems,
           u.id as uploader_id, u.name as uploader_name, u.avatar as uploader_avatar
    from files f left join users u on u.id = f.uploaded_by
    where ${fileCondition(tx, filter)}
    order by f.created_at, f.id`;
}

/**
 * The same files without uploader or stems, oldest first: for archives and share links, which show neither
 * (a link is anonymous, and a STEM's entries are not part of what it shows).
 */
export async function findStoredFileRows(tx: Queryable, filter: FileFilter): Promise<StoredFileRow[]> {
  return tx<StoredFileRow[]>`
    select f.id, f.cut_id, f.project_id, f.name, f.extension, f.type, f.size, f.mime_type, f.sha256, f.created_at,
           f.analysis, f.audio
    from files f
    where ${fileCondition(tx, filter)}
    order by f.created_at, f.id`;
}

/** A file to record: the row's own columns, with its uploader's id. */
export type NewFile = Pick<StoredFileRow, 'id' | 'cutId' | 'projectId' | 'name' | 'extension' | 'type' | 'size' | 'mimeType' | 'sha256'> & {
  uploadedBy: string;
};

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
   * Records a file; audio (CUT) and stems (STEM) also join the analysis queue, in the same transaction, so
   * every way a file gets recorded feeds it. Images are never analysed.
   */
  async insert(tx: Queryable, file: NewFile): Promise<void> {
    const analysed = file.type !== 'IMAGE';
    await tx`insert into files ${tx({ ...file, analysis: analysed ? 'pending' : 'unsupported' })}`;
    if (analysed) await tx`insert into analysis_jobs (file_id) values (${file.id})`;
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
  async findStemEntries(tx: Queryable, id: string, position: number, limit: number): Promise<(StemEntry & { position: number })[]> {
    return tx<(StemEntry & { position: number })[]>`
      select position, path, size, audio from stem_entries
      where file_id = ${id} and position >= ${position}
      order by position
      limit ${limit}`;
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

  async delete(tx: Queryable, id: string): Promise<void> {
    await tx`delete from files where id = ${id}`;
  }

  /**
   * Drops the stored_images rows of images no project, vibe or avatar took (a crash between storing and
   * recording): for the start-up sweep, before anything is uploaded.
   */
  async dropUntakenImages(): Promise<void> {
    await this.sql`
      delete from stored_images s
      where not exists (select 1 from projects where image = s.name)
        and not exists (select 1 from vibes where image = s.name)
        and not exists (select 1 from users where avatar = s.name)`;
  }

  /** Every name under DATA_DIR/files and DATA_DIR/images that a row refers to. */
  async storedNames(): Promise<{ files: Set<string>; images: Set<string> }> {
    const files = await this.sql<{ name: string }[]>`select id || '.' || extension as name from files`;
    const images = await this.sql<{ name: string }[]>`
      select image as name from projects where image is not null
      union all
      select image from vibes where image is not null
      union all
      select avatar from users where avatar is not null`;
    return { files: new Set(files.map((r) => r.name)), images: new Set(images.map((r) => r.name)) };
  }

  /** The bytes whose records committed deletes removed (the removed_bytes ledger), for the start-up sweep. */
  async removedNames(): Promise<{ dir: 'files' | 'images'; name: string }[]> {
    return [...(await this.sql<{ dir: 'files' | 'images'; name: string }[]>`select dir, name from removed_bytes`)];
  }

  /** Empties the ledger once the sweep has removed what it lists. */
  async forgetRemoved(): Promise<void> {
    await this.sql`truncate removed_bytes`;
  }
}
