import type { Cut, CutWithFiles, FileRecord } from '@bandcollab/sdk/contract';
import { injectable } from 'tsyringe';
import type { Queryable } from '../core/database.js';
import { type DeletedContent, type DeletedFile, deletedFileColumns } from '../core/stored-objects.js';
import { findFileRows, type FileSelection, toFileRecord } from '../files/repository.js';

type CutRow = Omit<Cut, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };

const toCut = (row: CutRow): Cut => ({
  id: row.id,
  vibeId: row.vibeId,
  projectId: row.projectId,
  name: row.name,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

/** The unique index on a vibe's cut names, compared case-insensitively. */
export const CUT_NAME_INDEX = 'cuts_vibe_name_key';

/** Which cuts to read with their files. */
export type CutFilter = { id: string } | { vibeId: string } | { projectId: string };

@injectable()
export class CutsRepository {
  async insert(tx: Queryable, cut: { vibeId: string; projectId: string; name: string }): Promise<Cut> {
    const [row] = await tx<CutRow[]>`
      insert into cuts (vibe_id, project_id, name) values (${cut.vibeId}, ${cut.projectId}, ${cut.name})
      returning *`;
    return toCut(row!);
  }

  /** Renames a cut; null when it is gone. */
  async rename(tx: Queryable, id: string, name: string): Promise<Cut | null> {
    const [row] = await tx<CutRow[]>`update cuts set name = ${name}, updated_at = now() where id = ${id} returning *`;
    return row ? toCut(row) : null;
  }

  /**
   * Moves a cut to another vibe (the database refuses one of another project); answers it with the vibe it
   * came from, or null when it is gone.
   */
  async move(tx: Queryable, id: string, vibeId: string): Promise<{ cut: Cut; fromVibeId: string } | null> {
    // The locking subquery reads the row as it is once any concurrent move has committed.
    const [row] = await tx<(CutRow & { fromVibeId: string })[]>`
      update cuts set vibe_id = ${vibeId}, updated_at = now()
      from (select id, vibe_id from cuts where id = ${id} for update) previous
      where cuts.id = previous.id
      returning cuts.*, previous.vibe_id as from_vibe_id`;
    return row ? { cut: toCut(row), fromVibeId: row.fromVibeId } : null;
  }

  /** Cuts oldest first, each with its files oldest first (`latest`: only the latest version of each series). */
  async withFiles(tx: Queryable, filter: CutFilter, selection: FileSelection = {}): Promise<CutWithFiles[]> {
    const where =
      'id' in filter ? tx`id = ${filter.id}` : 'vibeId' in filter ? tx`vibe_id = ${filter.vibeId}` : tx`project_id = ${filter.projectId}`;
    const rows = await tx<CutRow[]>`select * from cuts where ${where} order by created_at, id`;
    if (rows.length === 0) return [];
    const fileRows =
      'projectId' in filter
        ? await findFileRows(tx, { projectId: filter.projectId }, selection)
        : await findFileRows(tx, { cutIds: rows.map((row) => row.id) }, selection);
    const filesByCut = new Map<string, FileRecord[]>();
    for (const fileRow of fileRows) {
      const list = filesByCut.get(fileRow.cutId) ?? [];
      list.push(toFileRecord(fileRow));
      filesByCut.set(fileRow.cutId, list);
    }
    return rows.map((row) => ({ ...toCut(row), files: filesByCut.get(row.id) ?? [] }));
  }

  /** Locks the cut for a delete (the order: ProjectsRepository.deleteWithContent); its vibe, or null when it is gone. */
  async lockForDelete(tx: Queryable, cutId: string): Promise<string | null> {
    const [cut] = await tx<{ vibeId: string }[]>`select vibe_id from cuts where id = ${cutId} for update`;
    return cut?.vibeId ?? null;
  }

  /** Whether the cut holds a file someone other than `userId` uploaded. */
  async holdsFilesOfOthers(tx: Queryable, cutId: string, userId: string): Promise<boolean> {
    const [other] = await tx`select 1 from files where cut_id = ${cutId} and uploaded_by is distinct from ${userId} limit 1`;
    return other !== undefined;
  }

  /** Deletes a cut locked by `lockForDelete`, with its files. */
  async deleteWithFiles(tx: Queryable, cutId: string): Promise<DeletedContent> {
    const files = await tx<DeletedFile[]>`delete from files where cut_id = ${cutId} returning ${deletedFileColumns(tx)}`;
    await tx`delete from cuts where id = ${cutId}`;
    return { files: [...files], images: [] };
  }
}
