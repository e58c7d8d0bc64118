// The trash's SQL (§21, migration 039). Everything here names `public.` tables: the unqualified names reach the
// `live` views, which leave out exactly what this code works on.
import type { TrashKind } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { type DeletedContent, type DeletedFile, deletedFileColumns } from '../core/stored-objects.js';

export interface TrashEntry {
  trashId: string;
  id: string;
  kind: TrashKind;
  name: string;
  projectId: string;
  deletedById: string | null;
  deletedByName: string | null;
  trashedAt: Date;
  trashedUntil: Date;
  /** A trashed cover's project, a trashed vibe image's vibe; null for the other kinds. */
  imageOf: string | null;
}

export interface NewEntry {
  kind: TrashKind;
  id: string;
  projectId: string;
  deletedBy: string;
  trashedAt: Date;
  trashedUntil: Date;
}

/** A cover or a vibe image going to the trash: the image a project or vibe held until now. */
export interface NewImageEntry extends Omit<NewEntry, 'kind' | 'id'> {
  kind: ImageKind;
  imageOf: string;
  image: string;
  sha256: string | null;
  name: string;
}

export type ImageKind = Extract<TrashKind, 'cover' | 'vibe_image'>;

export const isImageKind = (kind: TrashKind): kind is ImageKind => kind === 'cover' || kind === 'vibe_image';

/** An image as a project or vibe holds it. */
export interface HeldImage {
  image: string;
  sha256: string | null;
}

const ENTRY_COLUMNS = (tx: Queryable) => tx`
  t.id as trash_id, t.thing_id as id, t.kind, t.name, t.project_id, t.deleted_by as deleted_by_id, u.name as deleted_by_name,
  t.trashed_at, t.trashed_until, t.image_of`;

@injectable()
export class TrashRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Writes the entry and stamps it on the thing and on everything under it not already in the trash (which
   * keeps its own entry). Runs after the delete's locks, in its transaction.
   */
  async move(tx: Queryable, entry: NewEntry): Promise<void> {
    const [row] = await tx<{ id: string }[]>`
      insert into public.trash (kind, thing_id, project_id, name, deleted_by, trashed_at, trashed_until)
      values (${entry.kind}, ${entry.id}, ${entry.projectId}, ${await this.nameOf(tx, entry.kind, entry.id)}, ${entry.deletedBy}, ${entry.trashedAt}, ${entry.trashedUntil})
      returning id`;
    const t = row!.id;
    const id = entry.id;
    await this.endUploadsInto(tx, entry.kind, id);
    switch (entry.kind) {
      case 'project':
        await tx`update public.projects set trash_id = ${t} where id = ${id}`;
        await tx`update public.vibes set trash_id = ${t} where project_id = ${id} and trash_id is null`;
        await tx`update public.cuts set trash_id = ${t} where project_id = ${id} and trash_id is null`;
        await tx`update public.file_series set trash_id = ${t} where cut_id in (select id from public.cuts where project_id = ${id}) and trash_id is null`;
        await tx`update public.files set trash_id = ${t} where project_id = ${id} and trash_id is null`;
        await tx`update public.comments set trash_id = ${t} where file_id in (select id from public.files where project_id = ${id}) and trash_id is null`;
        return;
      case 'vibe':
        await tx`update public.vibes set trash_id = ${t} where id = ${id}`;
        await tx`update public.cuts set trash_id = ${t} where vibe_id = ${id} and trash_id is null`;
        await tx`update public.file_series set trash_id = ${t} where cut_id in (select id from public.cuts where vibe_id = ${id}) and trash_id is null`;
        await tx`update public.files set trash_id = ${t} where cut_id in (select id from public.cuts where vibe_id = ${id}) and trash_id is null`;
        await tx`
          update public.comments set trash_id = ${t}
          where file_id in (select f.id from public.files f join public.cuts c on c.id = f.cut_id where c.vibe_id = ${id}) and trash_id is null`;
        return;
      case 'cut':
        await tx`update public.cuts set trash_id = ${t} where id = ${id}`;
        await tx`update public.file_series set trash_id = ${t} where cut_id = ${id} and trash_id is null`;
        await tx`update public.files set trash_id = ${t} where cut_id = ${id} and trash_id is null`;
        await tx`update public.comments set trash_id = ${t} where file_id in (select id from public.files where cut_id = ${id}) and trash_id is null`;
        return;
      case 'series':
        await tx`update public.file_series set trash_id = ${t} where id = ${id}`;
        await tx`update public.files set trash_id = ${t} where series_id = ${id} and trash_id is null`;
        await tx`update public.comments set trash_id = ${t} where file_id in (select id from public.files where series_id = ${id}) and trash_id is null`;
        return;
      case 'file':
        await tx`update public.files set trash_id = ${t} where id = ${id}`;
        await tx`update public.comments set trash_id = ${t} where file_id = ${id} and trash_id is null`;
        return;
      case 'comment':
        await tx`update public.comments set trash_id = ${t} where id = ${id}`;
        await tx`update public.comments set trash_id = ${t} where parent_id = ${id} and trash_id is null`;
        return;
      case 'cover':
      case 'vibe_image':
        throw new Error('an image goes to the trash through moveImage');
    }
  }

  /**
   * Writes the entry of an image a project or vibe stops holding, before the row lets go of it: the trigger of
   * migration 044 then keeps its stored_images row and bytes. The entry's id is new (a cover can be trashed
   * more than once).
   */
  async moveImage(tx: Queryable, entry: NewImageEntry): Promise<void> {
    await tx`
      insert into public.trash (kind, thing_id, project_id, name, deleted_by, trashed_at, trashed_until, image, image_sha256, image_of)
      values (${entry.kind}, gen_random_uuid(), ${entry.projectId}, ${entry.name}, ${entry.deletedBy}, ${entry.trashedAt}, ${entry.trashedUntil},
        ${entry.image}, ${entry.sha256}, ${entry.imageOf})`;
  }

  /** The image a project (cover) or vibe holds now, its row locked; null when it holds none. */
  async heldImage(tx: Queryable, kind: ImageKind, of: string): Promise<HeldImage | null> {
    const [row] =
      kind === 'cover'
        ? await tx<{ image: string | null; sha256: string | null }[]>`select image, image_sha256 as sha256 from public.projects where id = ${of} for update`
        : await tx<{ image: string | null; sha256: string | null }[]>`select image, image_sha256 as sha256 from public.vibes where id = ${of} for update`;
    return row?.image ? { image: row.image, sha256: row.sha256 } : null;
  }

  /** What the trash lists call the image a project (cover) or vibe holds: "cover of Demo", "image of vibe Verse". */
  async nameOfImage(tx: Queryable, kind: ImageKind, of: string): Promise<string> {
    const [row] =
      kind === 'cover'
        ? await tx<{ name: string }[]>`select 'cover of ' || name as name from public.projects where id = ${of}`
        : await tx<{ name: string }[]>`select 'image of vibe ' || name as name from public.vibes where id = ${of}`;
    return row?.name ?? '';
  }

  /** The image a trashed cover or vibe image entry holds. */
  async trashedImage(tx: Queryable, trashId: string): Promise<HeldImage> {
    const [row] = await tx<HeldImage[]>`select image, image_sha256 as sha256 from public.trash where id = ${trashId}`;
    return row!;
  }

  /** Gives a project (cover) or vibe the image a restore brings back; the entry lets go of it first. */
  async putImageBack(tx: Queryable, entry: TrashEntry & { kind: ImageKind }, held: HeldImage): Promise<void> {
    await tx`update public.trash set image = null where id = ${entry.trashId}`;
    if (entry.kind === 'cover') await tx`update public.projects set image = ${held.image}, image_sha256 = ${held.sha256} where id = ${entry.imageOf}`;
    else await tx`update public.vibes set image = ${held.image}, image_sha256 = ${held.sha256} where id = ${entry.imageOf}`;
  }

  /**
   * Incomplete resumable uploads into what goes to the trash end as with a delete (their bytes go through the
   * trigger of migration 018): a restore brings back what was stored, not uploads half made.
   */
  private async endUploadsInto(tx: Queryable, kind: TrashKind, id: string): Promise<void> {
    if (kind === 'project') await tx`delete from public.resumable_uploads where cut_id in (select id from public.cuts where project_id = ${id})`;
    if (kind === 'vibe') await tx`delete from public.resumable_uploads where cut_id in (select id from public.cuts where vibe_id = ${id})`;
    if (kind === 'cut') await tx`delete from public.resumable_uploads where cut_id = ${id}`;
    if (kind === 'series') await tx`delete from public.resumable_uploads where series_id = ${id}`;
  }

  /** What the thing is called, for the trash lists. */
  async nameOf(tx: Queryable, kind: TrashKind, id: string): Promise<string> {
    const [row] = await (() => {
      switch (kind) {
        case 'project':
          return tx<{ name: string }[]>`select name from public.projects where id = ${id}`;
        case 'vibe':
          return tx<{ name: string }[]>`select name from public.vibes where id = ${id}`;
        case 'cut':
          return tx<{ name: string }[]>`select name from public.cuts where id = ${id}`;
        case 'series':
          return tx<{ name: string }[]>`select name from public.files where series_id = ${id} order by version desc limit 1`;
        case 'file':
          return tx<{ name: string }[]>`select name || ' (version ' || version || ')' as name from public.files where id = ${id}`;
        case 'comment':
          return tx<{ name: string }[]>`select coalesce(left(body, 80), '') as name from public.comments where id = ${id}`;
        case 'cover':
        case 'vibe_image':
          return tx<{ name: string }[]>`select name from public.trash where thing_id = ${id}`;
      }
    })();
    return row?.name ?? '';
  }

  async find(tx: Queryable, kind: TrashKind, id: string, lock = false): Promise<TrashEntry | null> {
    const [row] = await tx<TrashEntry[]>`
      select ${ENTRY_COLUMNS(tx)} from public.trash t left join public.users u on u.id = t.deleted_by
      where t.kind = ${kind} and t.thing_id = ${id} ${lock ? tx`for update of t` : tx``}`;
    return row ?? null;
  }

  async findById(tx: Queryable, trashId: string): Promise<TrashEntry | null> {
    const [row] = await tx<TrashEntry[]>`
      select ${ENTRY_COLUMNS(tx)} from public.trash t left join public.users u on u.id = t.deleted_by where t.id = ${trashId} for update of t`;
    return row ?? null;
  }

  /** A project's entries but the project's own, newest first. */
  async ofProject(projectId: string): Promise<TrashEntry[]> {
    return this.sql<TrashEntry[]>`
      select ${ENTRY_COLUMNS(this.sql)} from public.trash t left join public.users u on u.id = t.deleted_by
      where t.project_id = ${projectId} and t.kind <> 'project'
      order by t.trashed_at desc, t.id`;
  }

  /** What `userId` deleted, and the trashed projects they are a member of, newest first. */
  async ofUser(userId: string): Promise<TrashEntry[]> {
    return this.sql<TrashEntry[]>`
      select ${ENTRY_COLUMNS(this.sql)} from public.trash t left join public.users u on u.id = t.deleted_by
      where t.deleted_by = ${userId}
         or (t.kind = 'project' and exists (select 1 from public.project_members m where m.project_id = t.project_id and m.user_id = ${userId}))
      order by t.trashed_at desc, t.id`;
  }

  /** The caller's role in a project, trashed or not (the `live` views hide a trashed project's members). */
  async roleIn(tx: Queryable, projectId: string, userId: string): Promise<string | null> {
    const [row] = await tx<{ role: string }[]>`select role from public.project_members where project_id = ${projectId} and user_id = ${userId}`;
    return row?.role ?? null;
  }

  /** The entry the thing's parent is in, when that is another than its own: restoring the thing restores it first. */
  async parentEntry(tx: Queryable, entry: TrashEntry): Promise<string | null> {
    const id = entry.id;
    const rows = await (() => {
      switch (entry.kind) {
        case 'project':
          return tx<{ trashId: string | null }[]>`select null::uuid as trash_id`;
        case 'vibe':
          return tx<{ trashId: string | null }[]>`select p.trash_id from public.vibes v join public.projects p on p.id = v.project_id where v.id = ${id}`;
        case 'cut':
          return tx<{ trashId: string | null }[]>`
            select coalesce(v.trash_id, p.trash_id) as trash_id from public.cuts c
            join public.vibes v on v.id = c.vibe_id join public.projects p on p.id = c.project_id where c.id = ${id}`;
        case 'series':
          return tx<{ trashId: string | null }[]>`select c.trash_id from public.file_series s join public.cuts c on c.id = s.cut_id where s.id = ${id}`;
        case 'file':
          return tx<{ trashId: string | null }[]>`
            select coalesce(s.trash_id, c.trash_id) as trash_id from public.files f
            join public.file_series s on s.id = f.series_id join public.cuts c on c.id = f.cut_id where f.id = ${id}`;
        case 'comment':
          return tx<{ trashId: string | null }[]>`
            select coalesce(parent.trash_id, f.trash_id) as trash_id from public.comments c
            join public.files f on f.id = c.file_id left join public.comments parent on parent.id = c.parent_id where c.id = ${id}`;
        case 'cover':
          return tx<{ trashId: string | null }[]>`select trash_id from public.projects where id = ${entry.imageOf}`;
        case 'vibe_image':
          return tx<{ trashId: string | null }[]>`
            select coalesce(v.trash_id, p.trash_id) as trash_id from public.vibes v join public.projects p on p.id = v.project_id where v.id = ${entry.imageOf}`;
      }
    })();
    const parent = rows[0]?.trashId ?? null;
    return parent === entry.trashId ? null : parent;
  }

  /** Whether restoring the thing would take a name (a vibe's, a cut's) or a session path already taken. */
  async clash(tx: Queryable, entry: TrashEntry): Promise<boolean> {
    const id = entry.id;
    const rows =
      entry.kind === 'vibe'
        ? await tx`
            select 1 from public.vibes v join public.vibes other on other.project_id = v.project_id and lower(other.name) = lower(v.name)
            where v.id = ${id} and other.id <> v.id and other.trash_id is null`
        : entry.kind === 'cut'
          ? await tx`
              select 1 from public.cuts c join public.cuts other on other.vibe_id = c.vibe_id and lower(other.name) = lower(c.name)
              where c.id = ${id} and other.id <> c.id and other.trash_id is null`
          : entry.kind === 'series'
            ? await tx`
                select 1 from public.file_series s join public.file_series other on other.cut_id = s.cut_id and other.path_key = s.path_key
                where s.id = ${id} and other.id <> s.id and other.trash_id is null`
            : [];
    return rows.length > 0;
  }

  async renameVibe(tx: Queryable, id: string, suffix: string): Promise<string> {
    const [row] = await tx<{ name: string }[]>`
      update public.vibes set name = left(name, 200 - length(${suffix})) || ${suffix} where id = ${id} returning name`;
    return row!.name;
  }

  async renameCut(tx: Queryable, id: string, suffix: string): Promise<string> {
    const [row] = await tx<{ name: string }[]>`
      update public.cuts set name = left(name, 200 - length(${suffix})) || ${suffix} where id = ${id} returning name`;
    return row!.name;
  }

  async seriesPath(tx: Queryable, id: string): Promise<string | null> {
    const [row] = await tx<{ path: string | null }[]>`select path from public.file_series where id = ${id}`;
    return row?.path ?? null;
  }

  async moveSeries(tx: Queryable, id: string, path: string, pathKey: string): Promise<void> {
    await tx`update public.file_series set path = ${path}, path_key = ${pathKey} where id = ${id}`;
  }

  /**
   * A vibe goes back to the position it had: the others at and after it move one down (the delete closed
   * ranks), at most to the end.
   */
  async makeRoomForVibe(tx: Queryable, id: string): Promise<void> {
    const [vibe] = await tx<{ projectId: string; position: number }[]>`select project_id, position from public.vibes where id = ${id}`;
    if (!vibe) return;
    const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
      select count(*)::int as count from public.vibes where project_id = ${vibe.projectId} and trash_id is null and id <> ${id}`;
    const position = Math.min(vibe.position, count);
    await tx`update public.vibes set position = position + 1 where project_id = ${vibe.projectId} and trash_id is null and position >= ${position}`;
    await tx`update public.vibes set position = ${position} where id = ${id}`;
  }

  /** Takes the entry's stamp off every row that carries it, and drops the entry. */
  async restore(tx: Queryable, trashId: string): Promise<void> {
    await tx`update public.projects set trash_id = null where trash_id = ${trashId}`;
    await tx`update public.vibes set trash_id = null where trash_id = ${trashId}`;
    await tx`update public.cuts set trash_id = null where trash_id = ${trashId}`;
    await tx`update public.file_series set trash_id = null where trash_id = ${trashId}`;
    await tx`update public.files set trash_id = null where trash_id = ${trashId}`;
    await tx`update public.comments set trash_id = null where trash_id = ${trashId}`;
    await tx`delete from public.trash where id = ${trashId}`;
  }

  /** Brings every entry whose time is up to now (purge on demand): the purge job then takes them. */
  async expire(tx: Queryable, trashIds: string[], now: Date): Promise<void> {
    await tx`update public.trash set trashed_until = ${now} where id = any(${trashIds}::uuid[])`;
  }

  /** The ids of a project's entries (every thing under it in the trash). */
  async idsOfProject(tx: Queryable, projectId: string): Promise<string[]> {
    const rows = await tx<{ id: string }[]>`select id from public.trash where project_id = ${projectId} and kind <> 'project' for update`;
    return rows.map((row) => row.id);
  }

  /**
   * One entry whose time is up, locked: another instance's purge skips it, and finds it gone once this one
   * commits. Null when none is due.
   */
  async claimDue(tx: Queryable, now: Date): Promise<TrashEntry | null> {
    const [row] = await tx<TrashEntry[]>`
      select ${ENTRY_COLUMNS(tx)} from public.trash t left join public.users u on u.id = t.deleted_by
      where t.trashed_until <= ${now}
      order by t.trashed_until
      limit 1
      for update of t skip locked`;
    return row ?? null;
  }

  /**
   * Deletes the thing's rows for good, with everything under them (the cascades), and the entries of things
   * that went with it. The removed_bytes ledger records their bytes (the triggers of migration 008); the
   * answer names them so the purge removes them at once.
   */
  async purge(tx: Queryable, entry: TrashEntry): Promise<DeletedContent> {
    const id = entry.id;
    type Image = { image: string | null };
    let files: DeletedFile[] = [];
    let images: Image[] = [];
    switch (entry.kind) {
      case 'project':
        // The project's trashed covers and vibe images go with its entries (the cascade).
        images = await tx<Image[]>`select image from public.trash where project_id = ${id} and image is not null`;
        files = await tx<DeletedFile[]>`delete from public.files where project_id = ${id} returning ${deletedFileColumns(tx)}`;
        images = [
          ...images,
          ...(await tx<Image[]>`delete from public.vibes where project_id = ${id} returning image`),
          ...(await tx<Image[]>`delete from public.projects where id = ${id} returning image`),
        ];
        break;
      case 'vibe':
        files = await tx<DeletedFile[]>`delete from public.files where cut_id in (select id from public.cuts where vibe_id = ${id}) returning ${deletedFileColumns(tx)}`;
        images = await tx<Image[]>`delete from public.vibes where id = ${id} returning image`;
        break;
      case 'cut':
        files = await tx<DeletedFile[]>`delete from public.files where cut_id = ${id} returning ${deletedFileColumns(tx)}`;
        await tx`delete from public.cuts where id = ${id}`;
        break;
      case 'series':
        files = await tx<DeletedFile[]>`delete from public.files where series_id = ${id} returning ${deletedFileColumns(tx)}`;
        await tx`delete from public.file_series where id = ${id}`;
        break;
      case 'file':
        files = await tx<DeletedFile[]>`delete from public.files where id = ${id} returning ${deletedFileColumns(tx)}`;
        break;
      case 'comment':
        await tx`delete from public.comments where id = ${id}`;
        break;
      case 'cover':
      case 'vibe_image':
        // The entry's own delete below lets go of the image (the trigger of migration 044).
        images = await tx<Image[]>`select image from public.trash where id = ${entry.trashId}`;
        break;
    }
    await tx`delete from public.trash where id = ${entry.trashId}`;
    // Entries of things the cascades took (a cut trashed before its vibe was purged, a vibe's trashed image).
    const cascaded = await tx<Image[]>`
      delete from public.trash t where t.project_id = ${entry.projectId} and not case t.kind
        when 'project' then exists (select 1 from public.projects where id = t.thing_id)
        when 'vibe' then exists (select 1 from public.vibes where id = t.thing_id)
        when 'cut' then exists (select 1 from public.cuts where id = t.thing_id)
        when 'series' then exists (select 1 from public.file_series where id = t.thing_id)
        when 'file' then exists (select 1 from public.files where id = t.thing_id)
        when 'comment' then exists (select 1 from public.comments where id = t.thing_id)
        when 'cover' then exists (select 1 from public.projects where id = t.image_of)
        else exists (select 1 from public.vibes where id = t.image_of) end
      returning t.image`;
    return { files: [...files], images: [...images, ...cascaded].flatMap((row) => (row.image ? [row.image] : [])) };
  }
}
