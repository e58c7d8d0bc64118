import type { Disk } from '../core/disk.js';
import type { Queryable } from '../core/database.js';
import { forbidden } from '../core/errors.js';

/** What a delete leaves to remove on disk once its transaction has committed. */
export interface DeletedContent {
  /** Stored at DATA_DIR/files/<id>.<extension>. */
  files: { id: string; extension: string }[];
  /** Stored at DATA_DIR/images/<name>. */
  images: string[];
}

/*
 * Deletes first lock, top-down, every row an insert underneath could reference: an upload key-shares its
 * cut, a new cut or a moved one its vibe, a new vibe takes the project lock. FOR UPDATE conflicts with
 * those key-share locks, so the delete waits for uploads already under way (and then sees their rows) and
 * later ones wait for it (and then find nothing). The project itself is only locked FOR NO KEY UPDATE,
 * which uploads' key-share locks pass, so the two never wait on each other in opposite orders.
 * Then every level is deleted with RETURNING, so the names removed on disk are the latest committed ones.
 * Each function answers null when the row is already gone.
 *
 * `onlyFilesOf` is whose files a delete may take with it: null for anyone's (a project ADMIN),
 * else a user id: a file of anyone else refuses the whole delete with 403. It is checked after the locks,
 * so an upload that committed while the delete waited for them is seen.
 */

/** Also answers the vibe the cut was in when it went. */
export async function deleteCutContent(
  tx: Queryable,
  cutId: string,
  onlyFilesOf: string | null,
): Promise<(DeletedContent & { vibeId: string }) | null> {
  const [cut] = await tx<{ vibe_id: string }[]>`select vibe_id from cuts where id = ${cutId} for update`;
  if (!cut) return null;
  if (onlyFilesOf !== null) {
    const [other] = await tx`select 1 from files where cut_id = ${cutId} and uploaded_by <> ${onlyFilesOf} limit 1`;
    if (other) throw forbidden('Only a project ADMIN can delete a cut holding files uploaded by someone else');
  }
  const files = await tx<{ id: string; extension: string }[]>`
    delete from files where cut_id = ${cutId} returning id, extension`;
  await tx`delete from cuts where id = ${cutId}`;
  return { files: [...files], images: [], vibeId: cut.vibe_id };
}

/** The caller holds the project lock (ProjectsRepository.lock): no vibe is created meanwhile. */
export async function deleteVibeContent(tx: Queryable, vibeId: string, onlyFilesOf: string | null): Promise<DeletedContent | null> {
  const [vibe] = await tx`select id from vibes where id = ${vibeId} for update`;
  if (!vibe) return null;
  await tx`select id from cuts where vibe_id = ${vibeId} for update`;
  if (onlyFilesOf !== null) {
    const [other] = await tx`
      select 1 from files where cut_id in (select id from cuts where vibe_id = ${vibeId}) and uploaded_by <> ${onlyFilesOf} limit 1`;
    if (other) throw forbidden('Only a project ADMIN can delete a vibe holding files uploaded by someone else');
  }
  const files = await tx<{ id: string; extension: string }[]>`
    delete from files where cut_id in (select id from cuts where vibe_id = ${vibeId}) returning id, extension`;
  const [deleted] = await tx<{ image: string | null }[]>`delete from vibes where id = ${vibeId} returning image`;
  return { files: [...files], images: imagesOf([deleted]) };
}

export async function deleteProjectContent(tx: Queryable, projectId: string): Promise<DeletedContent | null> {
  const [project] = await tx`select id from projects where id = ${projectId} for no key update`;
  if (!project) return null;
  await tx`select id from vibes where project_id = ${projectId} for update`;
  await tx`select id from cuts where project_id = ${projectId} for update`;
  const files = await tx<{ id: string; extension: string }[]>`
    delete from files where project_id = ${projectId} returning id, extension`;
  const vibes = await tx<{ image: string | null }[]>`delete from vibes where project_id = ${projectId} returning image`;
  const [deleted] = await tx<{ image: string | null }[]>`delete from projects where id = ${projectId} returning image`;
  return { files: [...files], images: imagesOf([...vibes, deleted]) };
}

const imagesOf = (rows: ({ image: string | null } | undefined)[]): string[] =>
  rows.flatMap((row) => (row?.image ? [row.image] : []));

/** Removes the bytes of committed deletes; never throws (a failure is logged and swept at the next start). */
export async function removeFromDisk(disk: Disk, content: DeletedContent): Promise<void> {
  await Promise.all([
    ...content.files.map((file) => disk.removeQuietly(disk.filePath(file.id, file.extension))),
    ...content.images.map((name) => disk.removeQuietly(disk.imagePath(name))),
  ]);
}
