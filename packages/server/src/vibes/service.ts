import type { ReorderVibesResult, Vibe, VibeWithCuts } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import { type Sql, violatesUniqueIndex } from '../core/database.js';
import { SQL } from '../core/di.js';
import { StoredObjects } from '../core/stored-objects.js';
import { DomainError, forbidden, invalidField, nameTaken, notFound } from '../core/errors.js';
import { ProjectAccess } from '../core/project-access.js';
import { CutsRepository } from '../cuts/repository.js';
import { EventPublisher, projectEvent } from '../events/publisher.js';
import type { StoredImage } from '../images/repository.js';
import { Images } from '../images/service.js';
import { toVibe, VIBE_NAME_INDEX, type VibeChanges, VibesRepository } from './repository.js';
import { TrashService } from '../trash/service.js';

/** Turns the database's refusal of a second vibe named `name` in a project into 409 NAME_TAKEN. */
const refuseTakenName =
  (name: string | undefined) =>
  (error: unknown): never => {
    if (violatesUniqueIndex(error, VIBE_NAME_INDEX)) throw nameTaken(`A vibe named "${name}" already exists in this project`);
    throw error;
  };

/**
 * Vibes: any member may create, change, reorder and delete them (a delete of others' files
 * needs an ADMIN). Names are unique within a project, case-insensitively: a unique index decides.
 */
@injectable()
export class VibesService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(VibesRepository) private readonly vibes: VibesRepository,
    @inject(CutsRepository) private readonly cuts: CutsRepository,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(Images) private readonly images: Images,
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(TrashService) private readonly trash: TrashService,
  ) {}

  /** A new vibe goes last; `image` is an image already stored (removed if this fails). */
  async create(principal: Principal, projectId: string, input: { name: string; image: StoredImage | null }): Promise<Vibe> {
    return this.images.keepIfRecorded(input.image, () =>
      this.sql.begin(async (tx) => {
        await this.access.require(principal, 'project', projectId, 'MEMBER', tx);
        // Positions are assigned under the project lock, so concurrent creates never share one.
        if (!(await this.vibes.lockProject(tx, projectId))) throw notFound('Project');
        const vibe = await this.vibes.insert(tx, { projectId, name: input.name, image: input.image }).catch(refuseTakenName(input.name));
        await this.events.publish(tx, projectEvent(principal, projectId, 'vibe.created', { vibe }));
        return vibe;
      }),
    );
  }

  async get(principal: Principal, vibeId: string): Promise<VibeWithCuts> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.access.require(principal, 'vibe', vibeId, 'MEMBER', tx);
      const row = await this.vibes.find(tx, vibeId);
      if (!row) throw notFound('Vibe');
      return { ...toVibe(row), cuts: await this.cuts.withFiles(tx, { vibeId }) };
    });
  }

  /** A replaced or cleared image goes to the trash; with the trash off, it is removed from disk after the change commits. */
  async update(principal: Principal, vibeId: string, changes: VibeChanges): Promise<Vibe> {
    const { vibe, oldImage } = await this.images.keepIfRecorded(changes.image ?? null, () =>
      this.sql.begin(async (tx) => {
        const { projectId } = await this.access.require(principal, 'vibe', vibeId, 'MEMBER', tx);
        // A cleared or replaced image goes to the trash (then its bytes stay), or is removed after the commit.
        const trashed = changes.image !== undefined && this.trash.enabled && (await this.trash.moveImage(tx, principal, { kind: 'vibe_image', of: vibeId, projectId }));
        const updated = await this.vibes.update(tx, vibeId, changes).catch(refuseTakenName(changes.name));
        if (!updated) throw notFound('Vibe');
        await this.events.publish(tx, projectEvent(principal, projectId, 'vibe.updated', { vibe: updated.vibe }));
        return { vibe: updated.vibe, oldImage: changes.image === undefined || trashed ? null : updated.previousImage };
      }),
    );
    if (oldImage !== null) await this.images.remove(oldImage);
    return vibe;
  }

  /**
   * Deletes the vibe, its cuts and their files; the others close ranks (positions 0…n-1). A vibe holding
   * files uploaded by someone else needs a project ADMIN.
   */
  async delete(principal: Principal, vibeId: string): Promise<Date | null> {
    const { content, trashedUntil } = await this.sql.begin(async (tx) => {
      const { projectId, role } = await this.access.require(principal, 'vibe', vibeId, 'MEMBER', tx);
      if (!(await this.vibes.lockProject(tx, projectId))) throw notFound('Vibe');
      if (!(await this.vibes.lockForDelete(tx, vibeId))) throw notFound('Vibe');
      // Checked after the locks, so a file uploaded while the delete waited for them is seen.
      if (role !== 'ADMIN' && (await this.vibes.holdsFilesOfOthers(tx, vibeId, principal.userId))) {
        throw forbidden('Only a project ADMIN can delete a vibe holding files uploaded by someone else');
      }
      if (this.trash.enabled) {
        const until = await this.trash.move(tx, principal, { kind: 'vibe', id: vibeId, projectId });
        await this.vibes.compactPositions(tx, projectId);
        await this.events.publish(tx, projectEvent(principal, projectId, 'vibe.trashed', { vibeId, trashedUntil: until.toISOString() }));
        return { content: null, trashedUntil: until };
      }
      const deleted = await this.vibes.deleteWithContent(tx, vibeId);
      await this.vibes.compactPositions(tx, projectId);
      await this.events.publish(tx, projectEvent(principal, projectId, 'vibe.deleted', { vibeId }));
      return { content: deleted, trashedUntil: null };
    });
    if (content) await this.objects.removeDeleted(content);
    return trashedUntil;
  }

  /**
   * `vibeIds` must be exactly one project's vibes, each once. Unknown or invisible ids: 404; ids of several
   * projects: 400; a set that is not the project's current one (a vibe added or deleted meanwhile): 409.
   * The project lock serialises reorders, creates and deletes, so positions stay 0…n-1 without duplicates.
   */
  async reorder(principal: Principal, vibeIds: string[]): Promise<ReorderVibesResult> {
    return this.sql.begin(async (tx) => {
      const projectOf = await this.vibes.projectsOf(tx, vibeIds);
      if (projectOf.size !== vibeIds.length) throw notFound('Vibe');
      const projectIds = [...new Set(projectOf.values())];
      for (const projectId of projectIds) await this.access.require(principal, 'project', projectId, 'MEMBER', tx);
      if (projectIds.length > 1) throw invalidField('vibeIds', 'must all belong to one project');
      const projectId = projectIds[0]!;
      if (!(await this.vibes.lockProject(tx, projectId))) throw notFound('Vibe');
      const current = await this.vibes.listByProject(tx, projectId);
      const requested = new Set(vibeIds);
      if (current.length !== requested.size || current.some((vibe) => !requested.has(vibe.id))) {
        throw new DomainError('ORDER_CONFLICT', "vibeIds must list exactly the project's current vibes; reload and try again");
      }
      await this.vibes.reorder(tx, projectId, vibeIds);
      await this.events.publish(tx, projectEvent(principal, projectId, 'vibes.reordered', { vibeIds }));
      return { projectId, vibes: await this.vibes.listByProject(tx, projectId) };
    });
  }
}
