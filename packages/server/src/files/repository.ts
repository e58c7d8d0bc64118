import type { FileType } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { findFileRows, type FileRow } from './records.js';

export interface NewFile {
  id: string;
  cutId: string;
  projectId: string;
  name: string;
  extension: string;
  type: FileType;
  size: number;
  mimeType: string;
  sha256: string;
  uploadedBy: string;
}

/** The columns the delete rule and the disk cleanup need. */
export interface FileOwnership {
  cut_id: string;
  extension: string;
  uploaded_by: string;
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

  async insert(tx: Queryable, file: NewFile): Promise<void> {
    await tx`
      insert into files (id, cut_id, project_id, name, extension, type, size, mime_type, sha256, uploaded_by)
      values (${file.id}, ${file.cutId}, ${file.projectId}, ${file.name}, ${file.extension}, ${file.type},
              ${file.size}, ${file.mimeType}, ${file.sha256}, ${file.uploadedBy})`;
  }

  async lockForDelete(tx: Queryable, id: string): Promise<FileOwnership | null> {
    const [row] = await tx<FileOwnership[]>`select cut_id, extension, uploaded_by from files where id = ${id} for update`;
    return row ?? null;
  }

  async delete(tx: Queryable, id: string): Promise<void> {
    await tx`delete from files where id = ${id}`;
  }

  /**
   * Every name under DATA_DIR/files and DATA_DIR/images that a row refers to, for the start-up sweep; first
   * drops the stored_images rows of images no project or vibe took (a crash between storing and recording).
   */
  async storedNames(): Promise<{ files: Set<string>; images: Set<string> }> {
    await this.sql`
      delete from stored_images s
      where not exists (select 1 from projects where image = s.name)
        and not exists (select 1 from vibes where image = s.name)`;
    const files = await this.sql<{ name: string }[]>`select id || '.' || extension as name from files`;
    const images = await this.sql<{ name: string }[]>`
      select image as name from projects where image is not null
      union all
      select image from vibes where image is not null`;
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
