import { injectable } from 'tsyringe';
import type { Queryable } from '../core/database.js';
import { type FileSelection, findStoredFileRows, type StoredFileRow } from '../files/repository.js';

/** A cut's name and its files, oldest first. */
export interface CutContent {
  name: string;
  files: StoredFileRow[];
}

@injectable()
export class ArchivesRepository {
  /** Null when the cut is gone; `latest`: only the latest version of each series. */
  async cutContent(tx: Queryable, cutId: string, selection: FileSelection = {}): Promise<CutContent | null> {
    const [cut] = await tx<{ name: string }[]>`select name from cuts where id = ${cutId}`;
    if (!cut) return null;
    return { name: cut.name, files: await findStoredFileRows(tx, { cutIds: [cutId] }, selection) };
  }
}
