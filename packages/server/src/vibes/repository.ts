import type { CutWithFiles, Vibe, VibeWithCuts } from '@bandcollab/sdk/contract';
import { injectable } from 'tsyringe';
import { type Queryable, setChanged } from '../core/database.js';
import { type DeletedContent, type DeletedFile, deletedFileColumns } from '../core/stored-objects.js';
import { imageUrl, type StoredImage } from '../images/repository.js';

export interface VibeRow {
  id: string;
  projectId: string;
  name: string;
  image: string | null;
  position: number;
  createdAt: Date;
  updatedAt: Date;
}

export const toVibe = (row: VibeRow): Vibe => ({
  id: row.id,
  projectId: row.projectId,
  name: row.name,
  imageUrl: imageUrl(row.image),
  position: row.position,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

/** Puts each cut under its vibe, keeping both orders. */
export const withCuts = (vibes: Vibe[], cuts: CutWithFiles[]): VibeWithCuts[] =>
  vibes.map((vibe) => ({ ...vibe, cuts: cuts.filter((cut) => cut.vibeId === vibe.id) }));

export interface VibeChanges {
  name?: string;
  /** A newly stored image, or null to clear. */
  image?: StoredImage | null;
}

/** The unique index on a project's vibe names, compared case-insensitively. */
export const VIBE_NAME_INDEX = 'vibes_project_name_key';

/** Callers hold the project lock (`lockProject`) around anything that assigns positions. */
@injectable()
export class VibesRepository {
  /**
   * Serialises the changes that must see a project's vibes as a whole (positions). NO KEY UPDATE leaves
   * uploads and other inserts that reference the project unblocked. False when the project is gone.
   */
  async lockProject(tx: Queryable, projectId: string): Promise<boolean> {
    const [row] = await tx`select 1 from projects where id = ${projectId} for no key update`;
    return row !== undefined;
  }

  async find(tx: Queryable, id: string): Promise<VibeRow | null> {
    const [row] = await tx<VibeRow[]>`select * from vibes where id = ${id}`;
    return row ?? null;
  }

  async listByProject(tx: Queryable, projectId: string): Promise<Vibe[]> {
    const rows = await tx<VibeRow[]>`select * from vibes where project_id = ${projectId} order by position, id`;
    return rows.map(toVibe);
  }

  /** The projects of some vibe ids; ids that name no vibe are absent. */
  async projectsOf(tx: Queryable, ids: string[]): Promise<Map<string, string>> {
    const rows = await tx<{ id: string; projectId: string }[]>`
      select id, project_id from vibes where id = any(${ids}::uuid[])`;
    return new Map(rows.map((row) => [row.id, row.projectId]));
  }

  /** A new vibe goes last. */
  async insert(tx: Queryable, vibe: { projectId: string; name: string; image: StoredImage | null }): Promise<Vibe> {
    const [row] = await tx<VibeRow[]>`
      insert into vibes (project_id, name, image, image_sha256, position)
      values (${vibe.projectId}, ${vibe.name}, ${vibe.image?.name ?? null}, ${vibe.image?.sha256 ?? null},
              (select coalesce(max(position) + 1, 0) from vibes where project_id = ${vibe.projectId}))
      returning *`;
    return toVibe(row!);
  }

  /** Updates a vibe; answers it with the image it had before, or null when it is gone. */
  async update(tx: Queryable, id: string, changes: VibeChanges): Promise<{ vibe: Vibe; previousImage: string | null } | null> {
    // The locking subquery reads the row as it is once any concurrent change has committed.
    const values = {
      name: changes.name,
      image: changes.image === undefined ? undefined : (changes.image?.name ?? null),
      imageSha256: changes.image === undefined ? undefined : (changes.image?.sha256 ?? null),
    };
    const [row] = await tx<(VibeRow & { previousImage: string | null })[]>`
      update vibes set ${setChanged(tx, values)}
      from (select id, image from vibes where id = ${id} for update) previous
      where vibes.id = previous.id
      returning vibes.*, previous.image as previous_image`;
    return row ? { vibe: toVibe(row), previousImage: row.previousImage } : null;
  }

  /** Gives the vibes positions 0…n-1 in the order of `ids`. */
  async reorder(tx: Queryable, projectId: string, ids: string[]): Promise<void> {
    await tx`
      update vibes set position = ordered.position - 1, updated_at = now()
      from unnest(${ids}::uuid[]) with ordinality as ordered (id, position)
      where vibes.id = ordered.id and vibes.project_id = ${projectId} and vibes.position <> ordered.position - 1`;
  }

  /** Closes the gap a deleted vibe leaves: positions run 0…n-1 again, order kept. */
  async compactPositions(tx: Queryable, projectId: string): Promise<void> {
    await tx`
      update vibes set position = ranked.position
      from (select id, (row_number() over (order by position, id) - 1)::int as position
            from vibes where project_id = ${projectId}) ranked
      where vibes.id = ranked.id and vibes.position <> ranked.position`;
  }

  /** Locks the vibe and its cuts for a delete (the order: ProjectsRepository.deleteWithContent); false when it is gone. */
  async lockForDelete(tx: Queryable, vibeId: string): Promise<boolean> {
    const [vibe] = await tx`select id from vibes where id = ${vibeId} for update`;
    if (!vibe) return false;
    await tx`select id from cuts where vibe_id = ${vibeId} for update`;
    return true;
  }

  /** Whether the vibe's cuts hold a file someone other than `userId` uploaded. */
  async holdsFilesOfOthers(tx: Queryable, vibeId: string, userId: string): Promise<boolean> {
    const [other] = await tx`
      select 1 from files where cut_id in (select id from cuts where vibe_id = ${vibeId}) and uploaded_by is distinct from ${userId} limit 1`;
    return other !== undefined;
  }

  /** Deletes a vibe locked by `lockForDelete`, with its cuts and their files. */
  async deleteWithContent(tx: Queryable, vibeId: string): Promise<DeletedContent> {
    const files = await tx<DeletedFile[]>`
      delete from files where cut_id in (select id from cuts where vibe_id = ${vibeId}) returning ${deletedFileColumns(tx)}`;
    const [deleted] = await tx<{ image: string | null }[]>`delete from vibes where id = ${vibeId} returning image`;
    return { files: [...files], images: deleted?.image ? [deleted.image] : [] };
  }
}
