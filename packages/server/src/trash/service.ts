import { filePathKey, type PurgedTrash, type RestoredTrash, type TrashItem, type TrashKind, type UpdatedProject, type Vibe } from '@bandcollab/sdk/contract';
import { inject, injectable, type InjectionToken } from 'tsyringe';
import { type Principal, reaches } from '../core/auth-guard.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Queryable, Sql } from '../core/database.js';
import { CLOCK, CONFIG, SQL } from '../core/di.js';
import { StoredObjects } from '../core/stored-objects.js';
import { forbidden, notFound } from '../core/errors.js';
import { JOB_KINDS } from '../core/job-kinds.js';
import { enqueue } from '../core/jobs-repository.js';
import { ProjectAccess } from '../core/project-access.js';
import { EventPublisher, type NewEvent, projectEvent } from '../events/publisher.js';
import { type ImageKind, isImageKind, type TrashEntry, TrashRepository } from './repository.js';

const DAY_MS = 86_400_000;
const RESTORED = ' (restored)';

/** What a delete tells the trash: the thing and its project. */
export interface Trashing {
  kind: TrashKind;
  id: string;
  projectId: string;
}

/**
 * The records a restored cover or vibe image changes, as the projects and vibes features answer them. Those
 * features move things into the trash, so the trash cannot import them back: the composition root passes
 * these readers in.
 */
export interface ImageOwners {
  /** The project as its owner's update answers it. */
  project(tx: Queryable, projectId: string, userId: string): Promise<UpdatedProject>;
  vibe(tx: Queryable, vibeId: string): Promise<Vibe>;
}
export const IMAGE_OWNERS: InjectionToken<ImageOwners> = Symbol('ImageOwners');

/**
 * The trash (§21). Deletes call `move` in their own transaction, after their locks and checks, instead of
 * deleting rows; the migration's `live` views then hide what it stamped from every other query.
 */
@injectable()
export class TrashService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(CONFIG) private readonly config: Config,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(TrashRepository) private readonly repository: TrashRepository,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(IMAGE_OWNERS) private readonly owners: ImageOwners,
  ) {}

  /** TRASH_RETENTION_DAYS=0: deletes are for good, as before the trash. */
  get enabled(): boolean {
    return this.config.trashRetentionDays > 0;
  }

  /** Moves the thing to the trash; answers when it leaves it for good. */
  async move(tx: Queryable, principal: Principal, thing: Trashing): Promise<Date> {
    const trashedAt = new Date(this.clock.now());
    const trashedUntil = new Date(trashedAt.getTime() + this.config.trashRetentionDays * DAY_MS);
    await this.repository.move(tx, { ...thing, deletedBy: principal.userId, trashedAt, trashedUntil });
    return trashedUntil;
  }

  /**
   * The image a project (cover) or vibe holds goes to the trash, before the change that clears or replaces it
   * (in its transaction; the row is locked here): its bytes and its place in the uploader's quota stay until
   * the purge. False when it holds none.
   */
  async moveImage(tx: Queryable, principal: Principal, image: { kind: ImageKind; of: string; projectId: string }): Promise<boolean> {
    const held = await this.repository.heldImage(tx, image.kind, image.of);
    if (held === null) return false;
    const trashedAt = new Date(this.clock.now());
    const trashedUntil = new Date(trashedAt.getTime() + this.config.trashRetentionDays * DAY_MS);
    await this.repository.moveImage(tx, {
      kind: image.kind,
      imageOf: image.of,
      projectId: image.projectId,
      image: held.image,
      sha256: held.sha256,
      name: await this.repository.nameOfImage(tx, image.kind, image.of),
      deletedBy: principal.userId,
      trashedAt,
      trashedUntil,
    });
    return true;
  }

  async listOfProject(principal: Principal, projectId: string): Promise<TrashItem[]> {
    await this.access.require(principal, 'project', projectId);
    return (await this.repository.ofProject(projectId)).map(toItem);
  }

  async listOfUser(principal: Principal): Promise<TrashItem[]> {
    return (await this.repository.ofUser(principal.userId)).filter((entry) => reaches(principal, entry.projectId)).map(toItem);
  }

  /** Puts it back, with the entries of its trashed parents first; touches no byte. */
  async restore(principal: Principal, kind: TrashKind, id: string): Promise<RestoredTrash> {
    return this.sql.begin(async (tx) => {
      const entry = await this.repository.find(tx, kind, id, true);
      if (!entry || !reaches(principal, entry.projectId)) throw notFound('Trashed thing');
      await this.mayHandle(tx, principal, entry);
      await this.restoreEntry(tx, principal, entry);
      const name = await this.nameAfterRestore(tx, entry);
      return { id: entry.id, kind: entry.kind, restored: true as const, name };
    });
  }

  /** Deletes it for good: the purge job takes it at once. */
  async purge(principal: Principal, kind: TrashKind, id: string): Promise<PurgedTrash> {
    return this.sql.begin(async (tx) => {
      const entry = await this.repository.find(tx, kind, id, true);
      if (!entry || !reaches(principal, entry.projectId)) throw notFound('Trashed thing');
      await this.mayHandle(tx, principal, entry);
      await this.expire(tx, [entry.trashId]);
      return { purging: 1 };
    });
  }

  /** ADMIN: everything in a project's trash, for good. */
  async empty(principal: Principal, projectId: string): Promise<PurgedTrash> {
    return this.sql.begin(async (tx) => {
      await this.access.require(principal, 'project', projectId, 'ADMIN', tx);
      const ids = await this.repository.idsOfProject(tx, projectId);
      await this.expire(tx, ids);
      return { purging: ids.length };
    });
  }

  /**
   * The trash_purge job, on any instance: each entry whose time is up goes in its own transaction, which
   * locks it (another instance skips it, then finds it gone); the rows go, then after the commit the bytes
   * (what a crash leaves, the removed_bytes ledger's purge removes).
   */
  readonly purgeDue = async (): Promise<void> => {
    const now = new Date(this.clock.now());
    for (;;) {
      const content = await this.sql.begin(async (tx) => {
        const entry = await this.repository.claimDue(tx, now);
        return entry && this.repository.purge(tx, entry);
      });
      if (!content) return;
      await this.objects.removeDeleted(content);
    }
  };

  private async expire(tx: Queryable, trashIds: string[]): Promise<void> {
    if (trashIds.length === 0) return;
    await this.repository.expire(tx, trashIds, new Date(this.clock.now()));
    await enqueue(tx, JOB_KINDS.trash_purge, {});
  }

  /** Who deleted it or a project ADMIN; for a trashed project, its ADMINs (the last ones it had). */
  private async mayHandle(tx: Queryable, principal: Principal, entry: TrashEntry): Promise<void> {
    const role = await this.repository.roleIn(tx, entry.projectId, principal.userId);
    if (role === null) throw notFound('Trashed thing');
    if (role === 'ADMIN' || (entry.kind !== 'project' && entry.deletedById === principal.userId)) return;
    throw forbidden('Only who deleted it or a project ADMIN can restore or purge this');
  }

  private async restoreEntry(tx: Queryable, principal: Principal, entry: TrashEntry): Promise<void> {
    const parent = await this.repository.parentEntry(tx, entry);
    if (parent !== null) {
      const parentEntry = await this.repository.findById(tx, parent);
      if (parentEntry) {
        await this.mayHandle(tx, principal, parentEntry);
        await this.restoreEntry(tx, principal, parentEntry);
      }
    }
    if (await this.repository.clash(tx, entry)) await this.rename(tx, entry);
    if (entry.kind === 'vibe') await this.repository.makeRoomForVibe(tx, entry.id);
    if (isImageKind(entry.kind)) await this.putImageBack(tx, principal, { ...entry, kind: entry.kind });
    await this.repository.restore(tx, entry.trashId);
    await this.events.publish(tx, await this.restoredEvent(tx, principal, entry));
  }

  /** A restored cover or vibe image takes its place again; one put there since goes to the trash in its stead. */
  private async putImageBack(tx: Queryable, principal: Principal, entry: TrashEntry & { kind: ImageKind }): Promise<void> {
    await this.moveImage(tx, principal, { kind: entry.kind, of: entry.imageOf!, projectId: entry.projectId });
    await this.repository.putImageBack(tx, entry, await this.repository.trashedImage(tx, entry.trashId));
  }

  private async rename(tx: Queryable, entry: TrashEntry): Promise<void> {
    if (entry.kind === 'vibe') await this.repository.renameVibe(tx, entry.id, RESTORED);
    if (entry.kind === 'cut') await this.repository.renameCut(tx, entry.id, RESTORED);
    if (entry.kind === 'series') {
      const path = await this.repository.seriesPath(tx, entry.id);
      if (path === null) return;
      const slash = path.lastIndexOf('/');
      const dot = path.lastIndexOf('.');
      const at = dot > slash + 1 ? dot : path.length;
      const renamed = `${path.slice(0, at)}${RESTORED}${path.slice(at)}`;
      await this.repository.moveSeries(tx, entry.id, renamed, renamed.split('/').map(filePathKey).join('/'));
    }
  }

  private async nameAfterRestore(tx: Queryable, entry: TrashEntry): Promise<string> {
    const [row] =
      entry.kind === 'vibe'
        ? await tx<{ name: string }[]>`select name from public.vibes where id = ${entry.id}`
        : entry.kind === 'cut'
          ? await tx<{ name: string }[]>`select name from public.cuts where id = ${entry.id}`
          : [];
    return row?.name ?? entry.name;
  }

  private async restoredEvent(tx: Queryable, principal: Principal, entry: TrashEntry): Promise<NewEvent> {
    const { projectId, id } = entry;
    switch (entry.kind) {
      case 'project':
        return projectEvent(principal, projectId, 'project.restored', { projectId });
      case 'vibe':
        return projectEvent(principal, projectId, 'vibe.restored', { vibeId: id });
      case 'cut': {
        const [cut] = await tx<{ vibeId: string }[]>`select vibe_id from public.cuts where id = ${id}`;
        return projectEvent(principal, projectId, 'cut.restored', { cutId: id, vibeId: cut!.vibeId });
      }
      case 'series':
      case 'file': {
        const [file] =
          entry.kind === 'file'
            ? await tx<{ id: string; cutId: string }[]>`select id, cut_id from public.files where id = ${id}`
            : await tx<{ id: string; cutId: string }[]>`select id, cut_id from public.files where series_id = ${id} order by version desc limit 1`;
        return projectEvent(principal, projectId, 'file.restored', { fileId: file?.id ?? id, cutId: file!.cutId });
      }
      case 'comment': {
        const [comment] = await tx<{ fileId: string }[]>`select file_id from public.comments where id = ${id}`;
        return projectEvent(principal, projectId, 'comment.restored', { commentId: id, fileId: comment!.fileId });
      }
      // An image coming back changes its project or vibe, as clearing it did.
      case 'cover': {
        return projectEvent(principal, projectId, 'project.updated', { project: await this.owners.project(tx, projectId, principal.userId) });
      }
      case 'vibe_image':
        return projectEvent(principal, projectId, 'vibe.updated', { vibe: await this.owners.vibe(tx, entry.imageOf!) });
    }
  }
}

/** The `trashedUntil` of a delete's answer: absent when the delete was for good. */
export const trashed = (trashedUntil: Date | null): { trashedUntil?: string } => (trashedUntil === null ? {} : { trashedUntil: trashedUntil.toISOString() });

const toItem = (entry: TrashEntry): TrashItem => ({
  id: entry.id,
  kind: entry.kind,
  name: entry.name,
  projectId: entry.projectId,
  deletedBy: entry.deletedById === null ? null : { id: entry.deletedById, name: entry.deletedByName ?? '' },
  trashedAt: entry.trashedAt.toISOString(),
  trashedUntil: entry.trashedUntil.toISOString(),
});
