import type { Cut, CutWithFiles } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import { type Sql, violatesUniqueIndex } from '../core/database.js';
import { SQL } from '../core/di.js';
import { StoredObjects } from '../core/stored-objects.js';
import { DomainError, forbidden, nameTaken, notFound } from '../core/errors.js';
import { ProjectAccess } from '../core/project-access.js';
import { EventPublisher, projectEvent } from '../events/publisher.js';
import { CUT_NAME_INDEX, CutsRepository } from './repository.js';
import { TrashService } from '../trash/service.js';

/** Turns the database's refusal of a second cut of one name in a vibe into 409 NAME_TAKEN with `detail`. */
const refuseTakenName =
  (detail: string) =>
  (error: unknown): never => {
    if (violatesUniqueIndex(error, CUT_NAME_INDEX)) throw nameTaken(detail);
    throw error;
  };
const nameTakenInVibe = (name: string) => refuseTakenName(`A cut named "${name}" already exists in this vibe`);

/**
 * Cuts: any member may create, rename, move and delete them (a delete of others' files needs
 * an ADMIN). Names are unique within a vibe, case-insensitively: a unique index decides.
 */
@injectable()
export class CutsService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(CutsRepository) private readonly cuts: CutsRepository,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(TrashService) private readonly trash: TrashService,
  ) {}

  async create(principal: Principal, vibeId: string, name: string): Promise<Cut> {
    return this.sql.begin(async (tx) => {
      const { projectId } = await this.access.require(principal, 'vibe', vibeId, 'MEMBER', tx);
      const cut = await this.cuts.insert(tx, { vibeId, projectId, name }).catch(nameTakenInVibe(name));
      await this.events.publish(tx, projectEvent(principal, projectId, 'cut.created', { cut }));
      return cut;
    });
  }

  /** `latest`: only the latest version of each series. */
  async get(principal: Principal, cutId: string, latest = false): Promise<CutWithFiles> {
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      await this.access.require(principal, 'cut', cutId, 'MEMBER', tx);
      const [cut] = await this.cuts.withFiles(tx, { id: cutId }, { latest });
      if (!cut) throw notFound('Cut');
      return cut;
    });
  }

  async rename(principal: Principal, cutId: string, name: string): Promise<Cut> {
    return this.sql.begin(async (tx) => {
      const { projectId } = await this.access.require(principal, 'cut', cutId, 'MEMBER', tx);
      const cut = await this.cuts.rename(tx, cutId, name).catch(nameTakenInVibe(name));
      if (!cut) throw notFound('Cut');
      await this.events.publish(tx, projectEvent(principal, projectId, 'cut.updated', { cut }));
      return cut;
    });
  }

  /**
   * Moves a cut to another vibe of its project. A vibe the caller cannot see is 404 like any other;
   * a vibe of another project of theirs is 400 CROSS_PROJECT_MOVE.
   */
  async move(principal: Principal, cutId: string, targetVibeId: string): Promise<Cut> {
    return this.sql.begin(async (tx) => {
      const { projectId } = await this.access.require(principal, 'cut', cutId, 'MEMBER', tx);
      const target = await this.access.require(principal, 'vibe', targetVibeId, 'MEMBER', tx);
      if (target.projectId !== projectId) {
        throw new DomainError('CROSS_PROJECT_MOVE', 'A cut can only move to a vibe of its own project');
      }
      const moved = await this.cuts
        .move(tx, cutId, targetVibeId)
        .catch(refuseTakenName('The target vibe already has a cut of this name; rename one of them first'));
      if (!moved) throw notFound('Cut');
      await this.events.publish(tx, projectEvent(principal, projectId, 'cut.moved', moved));
      return moved.cut;
    });
  }

  /**
   * Deletes the cut and its files; the bytes go once the rows are gone for good. A cut holding files
   * uploaded by someone else needs a project ADMIN.
   */
  async delete(principal: Principal, cutId: string): Promise<Date | null> {
    const { content, trashedUntil } = await this.sql.begin(async (tx) => {
      const { projectId, role } = await this.access.require(principal, 'cut', cutId, 'MEMBER', tx);
      const vibeId = await this.cuts.lockForDelete(tx, cutId);
      if (vibeId === null) throw notFound('Cut');
      // Checked after the lock, so a file uploaded while the delete waited for it is seen.
      if (role !== 'ADMIN' && (await this.cuts.holdsFilesOfOthers(tx, cutId, principal.userId))) {
        throw forbidden('Only a project ADMIN can delete a cut holding files uploaded by someone else');
      }
      if (this.trash.enabled) {
        const until = await this.trash.move(tx, principal, { kind: 'cut', id: cutId, projectId });
        await this.events.publish(tx, projectEvent(principal, projectId, 'cut.trashed', { cutId, vibeId, trashedUntil: until.toISOString() }));
        return { content: null, trashedUntil: until };
      }
      const deleted = await this.cuts.deleteWithFiles(tx, cutId);
      await this.events.publish(tx, projectEvent(principal, projectId, 'cut.deleted', { cutId, vibeId }));
      return { content: deleted, trashedUntil: null };
    });
    if (content) await this.objects.removeDeleted(content);
    return trashedUntil;
  }
}
