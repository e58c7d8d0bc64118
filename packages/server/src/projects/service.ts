import type { Member, Project, ProjectDetail, Role, UpdatedProject } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { type Principal, reaches, requireEveryProject } from '../core/auth-guard.js';
import type { Sql, Tx } from '../core/database.js';
import { SQL } from '../core/di.js';
import { StoredObjects } from '../core/stored-objects.js';
import { DomainError, notFound } from '../core/errors.js';
import { ProjectAccess } from '../core/project-access.js';
import type { StoredBytes } from '../core/transfer.js';
import { CutsRepository } from '../cuts/repository.js';
import { EventPublisher, projectEvent } from '../events/publisher.js';
import { ReviewGate } from '../files/review-gate.js';
import { VibesRepository, withCuts } from '../vibes/repository.js';
import type { StoredImage } from '../images/repository.js';
import { IMAGE_NAME, Images } from '../images/service.js';
import { TrashService } from '../trash/service.js';
import { WebhooksRepository } from '../webhooks/repository.js';
import { type ProjectChanges, ProjectsRepository, toProject, toUpdatedProject } from './repository.js';

const lastAdmin = () => new DomainError('LAST_ADMIN', 'A project keeps at least one ADMIN; make another member ADMIN first');

/** Projects and members; invitations are their own feature. */
@injectable()
export class ProjectsService {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(ProjectsRepository) private readonly projects: ProjectsRepository,
    @inject(VibesRepository) private readonly vibes: VibesRepository,
    @inject(CutsRepository) private readonly cuts: CutsRepository,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(EventPublisher) private readonly events: EventPublisher,
    @inject(ReviewGate) private readonly gate: ReviewGate,
    @inject(WebhooksRepository) private readonly webhooks: WebhooksRepository,
    @inject(Images) private readonly images: Images,
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(TrashService) private readonly trash: TrashService,
  ) {}

  async list(principal: Principal): Promise<Project[]> {
    return (await this.projects.listForUser(principal.userId)).filter((project) => reaches(principal, project.id));
  }

  /** Creates a project with its creator as ADMIN; `image` is an image already stored (removed if this fails). */
  async create(principal: Principal, input: { name: string; description: string | null; image: StoredImage | null }): Promise<Project> {
    requireEveryProject(principal, 'create projects');
    return this.images.keepIfRecorded(input.image, () =>
      this.sql.begin(async (tx) => {
        const id = await this.projects.insert(tx, input, principal.userId);
        // The creator's own open event sockets learn of the project from this membership change.
        const creator = (await this.projects.findMember(tx, id, principal.userId))!;
        await this.events.publish(tx, projectEvent(principal, id, 'member.added', { member: creator }));
        return toProject((await this.projects.findForUser(tx, id, principal.userId))!);
      }),
    );
  }

  /** `latest`: each cut lists only the latest version of each series. */
  async detail(principal: Principal, projectId: string, latest = false): Promise<ProjectDetail> {
    // One snapshot, so members, vibes, cuts and files agree with each other.
    return this.sql.begin('isolation level repeatable read read only', async (tx) => {
      const { role } = await this.access.require(principal, 'project', projectId, 'MEMBER', tx);
      const project = (await this.projects.findForUser(tx, projectId, principal.userId))!;
      const [members, vibes, cuts, invitations] = await Promise.all([
        this.projects.members(tx, projectId),
        this.vibes.listByProject(tx, projectId),
        this.cuts.withFiles(tx, { projectId }, { latest }),
        role === 'ADMIN' ? this.projects.pendingInvitations(tx, projectId) : [],
      ]);
      return { ...toUpdatedProject(project), members, vibes: withCuts(vibes, cuts), invitations };
    });
  }

  /** A project cover or vibe image, to members of its project; a name this server never gave is 404. */
  async image(principal: Principal, name: string): Promise<StoredBytes> {
    const found = IMAGE_NAME.test(name) ? await this.projects.findImage(name) : null;
    if (found === null) throw notFound('Image');
    await this.access.require(principal, 'project', found.projectId);
    if (found.sha256 !== null) return this.images.stored({ name, sha256: found.sha256 });
    // Stored before migration 010 recorded each image's sha256: hashed once, on its first read.
    const sha256 = await this.images.hash(name);
    await this.projects.recordImageSha256(name, sha256);
    return this.images.stored({ name, sha256 });
  }

  /** ADMIN. A replaced or cleared cover goes to the trash; with the trash off, it is removed from disk after the change commits. */
  async update(principal: Principal, projectId: string, changes: ProjectChanges): Promise<UpdatedProject> {
    const newImage = changes.image ?? null;
    const { project, oldImage } = await this.images.keepIfRecorded(newImage, () =>
      this.sql.begin(async (tx) => {
        const locked = await this.projects.lock(tx, projectId);
        if (!locked) throw notFound('Project');
        await this.access.require(principal, 'project', projectId, 'ADMIN', tx);
        if (changes.reviewPolicy) await this.gate.lock(tx, { projectId });
        // A cleared or replaced cover goes to the trash (then its bytes stay), or is removed after the commit.
        const trashed = changes.image !== undefined && this.trash.enabled && (await this.trash.moveImage(tx, principal, { kind: 'cover', of: projectId, projectId }));
        await this.projects.update(tx, projectId, changes);
        const updated = toUpdatedProject((await this.projects.findForUser(tx, projectId, principal.userId))!);
        await this.events.publish(tx, projectEvent(principal, projectId, 'project.updated', { project: updated }));
        // A looser policy can make versions ready at once (a stricter one, not ready): each passing is announced.
        if (changes.reviewPolicy) await this.gate.settle(tx, principal, { projectId });
        return { project: updated, oldImage: changes.image === undefined || trashed ? null : locked.image };
      }),
    );
    if (oldImage !== null) await this.images.remove(oldImage);
    return project;
  }

  /** ADMIN. Trashes (or with the trash off deletes) vibes, cuts, files and images; the bytes go once the rows are gone for good. */
  async delete(principal: Principal, projectId: string): Promise<Date | null> {
    if (this.trash.enabled) {
      return this.sql.begin(async (tx) => {
        await this.access.require(principal, 'project', projectId, 'ADMIN', tx);
        if (!(await this.projects.lockContent(tx, projectId))) throw notFound('Project');
        const trashedUntil = await this.trash.move(tx, principal, { kind: 'project', id: projectId, projectId });
        await this.events.publish(tx, projectEvent(principal, projectId, 'project.trashed', { projectId, trashedUntil: trashedUntil.toISOString() }));
        return trashedUntil;
      });
    }
    const content = await this.sql.begin(async (tx) => {
      await this.access.require(principal, 'project', projectId, 'ADMIN', tx);
      // Published while the project's endpoints and members are there to fan out to (an account endpoint hears
      // the events of its owner's projects); the project's endpoints are then retired, not dropped with it, so
      // that this last event still reaches them.
      await this.events.publish(tx, projectEvent(principal, projectId, 'project.deleted', { projectId }));
      await this.webhooks.retireProjectEndpoints(tx, projectId);
      const deleted = await this.projects.deleteWithContent(tx, projectId);
      if (!deleted) throw notFound('Project');
      return deleted;
    });
    await this.webhooks.dropIdleRetired();
    await this.objects.removeDeleted(content);
    return null;
  }

  /** ADMIN. The last ADMIN cannot be demoted. */
  async setRole(principal: Principal, projectId: string, userId: string, role: Role): Promise<Member> {
    return this.sql.begin(async (tx) => {
      const member = await this.lockedMember(tx, principal, projectId, userId, 'ADMIN');
      if (member.role === role) return member;
      if (member.role === 'ADMIN' && (await this.projects.countAdmins(tx, projectId)) === 1) throw lastAdmin();
      await this.projects.setMemberRole(tx, projectId, userId, role);
      const changed = { ...member, role };
      await this.events.publish(tx, projectEvent(principal, projectId, 'member.role_changed', { member: changed }));
      return changed;
    });
  }

  /** ADMIN, or the member themselves (leaving). The last ADMIN can be neither removed nor leave. */
  async removeMember(principal: Principal, projectId: string, userId: string): Promise<void> {
    await this.sql.begin(async (tx) => {
      const need: Role = userId === principal.userId ? 'MEMBER' : 'ADMIN';
      const member = await this.lockedMember(tx, principal, projectId, userId, need);
      if (member.role === 'ADMIN' && (await this.projects.countAdmins(tx, projectId)) === 1) throw lastAdmin();
      await this.projects.removeMember(tx, projectId, userId);
      await this.events.publish(tx, projectEvent(principal, projectId, 'member.removed', { userId }));
    });
  }

  /**
   * Takes the project lock, so that concurrent role changes and removals see each other (two ADMINs
   * demoting each other cannot leave none), then checks the caller's access and finds the member.
   */
  private async lockedMember(tx: Tx, principal: Principal, projectId: string, userId: string, need: Role): Promise<Member> {
    if (!(await this.projects.lock(tx, projectId))) throw notFound('Project');
    await this.access.require(principal, 'project', projectId, need, tx);
    const member = await this.projects.findMember(tx, projectId, userId);
    if (!member) throw notFound('Member');
    return member;
  }
}
