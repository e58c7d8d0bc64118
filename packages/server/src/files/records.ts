import type { FileRecord, FileType } from '@bandcollab/sdk/contract';
import type { Queryable } from '../core/database.js';

/** A `files` row joined with its uploader, as every query that returns File records selects it. */
export interface FileRow {
  id: string;
  cut_id: string;
  project_id: string;
  name: string;
  extension: string;
  type: FileType;
  /** `bigint` arrives as a string from postgres.js. */
  size: string | number;
  mime_type: string;
  sha256: string;
  created_at: Date;
  uploader_id: string;
  uploader_name: string;
  uploader_avatar_url: string | null;
}

const fileUrl = (id: string, extension: string): string => `/uploads/files/${id}.${extension}`;

/** The one mapping of a file row to the API's File record. */
export function toFileRecord(row: FileRow): FileRecord {
  return {
    id: row.id,
    cutId: row.cut_id,
    name: row.name,
    type: row.type,
    size: Number(row.size),
    mimeType: row.mime_type,
    url: fileUrl(row.id, row.extension),
    sha256: row.sha256,
    uploadedBy: { id: row.uploader_id, name: row.uploader_name, avatarUrl: row.uploader_avatar_url },
    createdAt: row.created_at.toISOString(),
  };
}

/** Which files to read: one file, the files of some cuts, or every file of a project. */
export type FileFilter = { id: string } | { cutIds: string[] } | { projectId: string };

/** File rows with their uploader, oldest first; FilesRepository reads one, CutsRepository a cut's or a project's. */
export async function findFileRows(tx: Queryable, filter: FileFilter): Promise<FileRow[]> {
  const where =
    'id' in filter
      ? tx`f.id = ${filter.id}`
      : 'cutIds' in filter
        ? tx`f.cut_id = any(${filter.cutIds}::uuid[])`
        : tx`f.project_id = ${filter.projectId}`;
  return tx<FileRow[]>`
    select f.id, f.cut_id, f.project_id, f.name, f.extension, f.type, f.size, f.mime_type, f.sha256, f.created_at,
           u.id as uploader_id, u.name as uploader_name, u.avatar_url as uploader_avatar_url
    from files f join users u on u.id = f.uploaded_by
    where ${where}
    order by f.created_at, f.id`;
}
