import type { Invitation, Member, Project, Role, UpdatedProject } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { type Queryable, setChanged, type Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { type DeletedContent, type DeletedFile, deletedFileColumns } from '../core/stored-objects.js';
import { avatarUrl, imageUrl, type StoredImage } from '../images/repository.js';

const INVITATION_DAYS = 30;

export interface ProjectRow {
  id: string;
  name: string;
  description: string | null;
  image: string | null;
  createdAt: Date;
  updatedAt: Date;
  memberCount: number;
  /** The caller's membership role. */
  role: Role;
  reviewApprovals: number;
  reviewNoOpenComments: boolean;
}

type MemberRow = Omit<Member, 'avatarUrl' | 'joinedAt'> & { avatar: string | null; joinedAt: Date };

interface InvitationRow {
  id: string;
  email: string;
  role: Role;
  invitedById: string;
  invitedByName: string;
  createdAt: Date;
  expiresAt: Date;
}

export const toProject = (row: ProjectRow): Project => ({
  id: row.id,
  name: row.name,
  description: row.description,
  imageUrl: imageUrl(row.image),
  createdAt: row.createdAt.toISOString(),
  memberCount: row.memberCount,
  role: row.role,
  reviewPolicy: { approvals: row.reviewApprovals, noOpenComments: row.reviewNoOpenComments },
});

export const toUpdatedProject = (row: ProjectRow): UpdatedProject => ({
  ...toProject(row),
  updatedAt: row.updatedAt.toISOString(),
});

const toMember = (row: MemberRow): Member => ({
  userId: row.userId,
  email: row.email,
  name: row.name,
  avatarUrl: avatarUrl(row.avatar),
  role: row.role,
  joinedAt: row.joinedAt.toISOString(),
});

const toInvitation = (row: InvitationRow): Invitation => ({
  id: row.id,
  email: row.email,
  role: row.role,
  invitedBy: { id: row.invitedById, name: row.invitedByName },
  createdAt: row.createdAt.toISOString(),
  expiresAt: row.expiresAt.toISOString(),
});

/** A pending invitation as its link finds it. */
export interface LinkedInvitation {
  id: string;
  projectId: string;
  projectName: string;
  email: string;
  role: Role;
  inviterName: string;
  expiresAt: Date;
}

export interface ProjectChanges {
  name?: string;
  description?: string | null;
  /** A newly stored image, or null to clear. */
  image?: StoredImage | null;
  /** The review policy's fields to change (§19). */
  reviewPolicy?: { approvals?: number | undefined; noOpenComments?: boolean | undefined } | undefined;
}

@injectable()
export class ProjectsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** The caller's projects, newest first. */
  async listForUser(userId: string): Promise<Project[]> {
    const rows = await this.sql<ProjectRow[]>`
      select p.*, m.role,
             (select count(*)::int from project_members c where c.project_id = p.id) as member_count
      from projects p join project_members m on m.project_id = p.id and m.user_id = ${userId}
      order by p.created_at desc, p.id desc`;
    return rows.map(toProject);
  }

  /** The project as its member `userId` sees it; null when it is gone or they are not a member. */
  async findForUser(tx: Queryable, projectId: string, userId: string): Promise<ProjectRow | null> {
    const [row] = await tx<ProjectRow[]>`
      select p.*, m.role,
             (select count(*)::int from project_members c where c.project_id = p.id) as member_count
      from projects p join project_members m on m.project_id = p.id and m.user_id = ${userId}
      where p.id = ${projectId}`;
    return row ?? null;
  }

  async insert(tx: Queryable, project: { name: string; description: string | null; image: StoredImage | null }, creatorId: string): Promise<string> {
    const [row] = await tx<{ id: string }[]>`
      insert into projects (name, description, image, image_sha256)
      values (${project.name}, ${project.description}, ${project.image?.name ?? null}, ${project.image?.sha256 ?? null})
      returning id`;
    await tx`insert into project_members (project_id, user_id, role) values (${row!.id}, ${creatorId}, 'ADMIN')`;
    return row!.id;
  }

  /**
   * Serialises the changes that must see a project's members as a whole (last-admin checks; vibe positions
   * take the same lock through VibesRepository.lockProject). NO KEY UPDATE leaves uploads and other inserts that reference the project unblocked.
   * Answers the project's current image, or undefined when the project is gone.
   */
  async lock(tx: Queryable, projectId: string): Promise<{ image: string | null } | undefined> {
    const [row] = await tx<{ image: string | null }[]>`
      select image from projects where id = ${projectId} for no key update`;
    return row;
  }

  /**
   * Locks a project for a delete, or a move to the trash; false when it is already gone.
   *
   * Every delete (here, VibesRepository.deleteWithContent, CutsRepository.deleteWithFiles) first locks,
   * top-down, every row an insert underneath could reference: an upload key-shares its cut, a new cut or a
   * moved one its vibe, a new vibe takes the project lock. FOR UPDATE conflicts with those key-share locks,
   * so the delete waits for uploads already under way (and then sees their rows) and later ones wait for it
   * (and then find nothing). The project itself is only locked FOR NO KEY UPDATE, which uploads' key-share
   * locks pass, so the two never wait on each other in opposite orders. Then every level is deleted with
   * RETURNING, so the names removed on disk are the latest committed ones.
   */
  async lockContent(tx: Queryable, projectId: string): Promise<boolean> {
    const [project] = await tx`select id from projects where id = ${projectId} for no key update`;
    if (!project) return false;
    await tx`select id from vibes where project_id = ${projectId} for update`;
    await tx`select id from cuts where project_id = ${projectId} for update`;
    return true;
  }

  /** Deletes a project with its vibes, cuts and files for good; null when it is already gone. */
  async deleteWithContent(tx: Queryable, projectId: string): Promise<DeletedContent | null> {
    if (!(await this.lockContent(tx, projectId))) return null;
    const files = await tx<DeletedFile[]>`
      delete from files where project_id = ${projectId} returning ${deletedFileColumns(tx)}`;
    const vibes = await tx<{ image: string | null }[]>`delete from vibes where project_id = ${projectId} returning image`;
    const [deleted] = await tx<{ image: string | null }[]>`delete from projects where id = ${projectId} returning image`;
    return { files: [...files], images: imagesOf([...vibes, deleted]) };
  }

  async update(tx: Queryable, projectId: string, changes: ProjectChanges): Promise<void> {
    const values = {
      name: changes.name,
      description: changes.description,
      image: changes.image === undefined ? undefined : (changes.image?.name ?? null),
      imageSha256: changes.image === undefined ? undefined : (changes.image?.sha256 ?? null),
      reviewApprovals: changes.reviewPolicy?.approvals,
      reviewNoOpenComments: changes.reviewPolicy?.noOpenComments,
    };
    await tx`update projects set ${setChanged(tx, values)} where id = ${projectId}`;
  }

  /** The project's members, earliest first; or just `userId` among them. */
  async members(tx: Queryable, projectId: string, userId?: string): Promise<Member[]> {
    const rows = await tx<MemberRow[]>`
      select m.user_id, u.email, u.name, u.avatar, m.role, m.joined_at
      from project_members m join users u on u.id = m.user_id
      where m.project_id = ${projectId} ${userId === undefined ? tx`` : tx`and m.user_id = ${userId}`}
      order by m.joined_at, u.name, m.user_id`;
    return rows.map(toMember);
  }

  /** `userId`'s member record in each of their projects. */
  async memberRecordsOf(tx: Queryable, userId: string): Promise<{ projectId: string; member: Member }[]> {
    const rows = await tx<(MemberRow & { projectId: string })[]>`
      select m.project_id, m.user_id, u.email, u.name, u.avatar, m.role, m.joined_at
      from project_members m join users u on u.id = m.user_id
      where m.user_id = ${userId}`;
    return rows.map((row) => ({ projectId: row.projectId, member: toMember(row) }));
  }

  async findMember(tx: Queryable, projectId: string, userId: string): Promise<Member | null> {
    return (await this.members(tx, projectId, userId))[0] ?? null;
  }

  /** Adds a member; null when they already are one. */
  async addMember(tx: Queryable, projectId: string, userId: string, role: Role): Promise<Member | null> {
    const added = await tx`
      insert into project_members (project_id, user_id, role) values (${projectId}, ${userId}, ${role})
      on conflict do nothing returning user_id`;
    return added.length === 0 ? null : this.findMember(tx, projectId, userId);
  }

  async setMemberRole(tx: Queryable, projectId: string, userId: string, role: Role): Promise<void> {
    await tx`update project_members set role = ${role} where project_id = ${projectId} and user_id = ${userId}`;
  }

  async removeMember(tx: Queryable, projectId: string, userId: string): Promise<void> {
    await tx`delete from project_members where project_id = ${projectId} and user_id = ${userId}`;
  }

  async countAdmins(tx: Queryable, projectId: string): Promise<number> {
    const [row] = await tx<{ count: number }[]>`
      select count(*)::int as count from project_members where project_id = ${projectId} and role = 'ADMIN'`;
    return row!.count;
  }

  /**
   * The project whose cover or one of whose vibes uses the image, with the image's sha256 (null for an image
   * stored before it was recorded); null when no project uses the image.
   */
  async findImage(image: string): Promise<{ projectId: string; sha256: string | null } | null> {
    const [row] = await this.sql<{ projectId: string; sha256: string | null }[]>`
      select id as project_id, image_sha256 as sha256 from projects where image = ${image}
      union all
      select project_id, image_sha256 from vibes where image = ${image}
      limit 1`;
    return row ?? null;
  }

  /** Records the sha256 of an image stored before the column existed, wherever it is used. */
  async recordImageSha256(image: string, sha256: string): Promise<void> {
    await this.sql`update projects set image_sha256 = ${sha256} where image = ${image} and image_sha256 is null`;
    await this.sql`update vibes set image_sha256 = ${sha256} where image = ${image} and image_sha256 is null`;
  }

  /** Whether `email` belongs to a member of the project. */
  async hasMemberWithEmail(tx: Queryable, projectId: string, email: string): Promise<boolean> {
    const rows = await tx`
      select 1 from project_members m join users u on u.id = m.user_id
      where m.project_id = ${projectId} and u.email = ${email}`;
    return rows.length > 0;
  }

  /** Pending (unexpired) invitations, oldest first; or just the one with `id`. */
  async pendingInvitations(tx: Queryable, projectId: string, id?: string): Promise<Invitation[]> {
    const rows = await tx<InvitationRow[]>`
      select i.id, i.email, i.role, u.id as invited_by_id, u.name as invited_by_name, i.created_at, i.expires_at
      from invitations i join users u on u.id = i.invited_by
      where i.project_id = ${projectId} and i.expires_at > now() ${id === undefined ? tx`` : tx`and i.id = ${id}`}
      order by i.created_at, i.id`;
    return rows.map(toInvitation);
  }

  /**
   * Invites an email under the link whose token hashes to `tokenHash`; inviting it again replaces the
   * link, role and inviter and restarts the 30 days.
   */
  async upsertInvitation(
    tx: Queryable,
    projectId: string,
    invitation: { email: string; role: Role; invitedBy: string; tokenHash: string },
  ): Promise<Invitation> {
    const [row] = await tx<{ id: string }[]>`
      insert into invitations (project_id, email, role, invited_by, token_hash, expires_at)
      values (${projectId}, ${invitation.email}, ${invitation.role}, ${invitation.invitedBy}, ${invitation.tokenHash},
              now() + make_interval(days => ${INVITATION_DAYS}))
      on conflict (project_id, email) do update set
        role = excluded.role, invited_by = excluded.invited_by, token_hash = excluded.token_hash,
        created_at = now(), expires_at = excluded.expires_at
      returning id`;
    return (await this.pendingInvitations(tx, projectId, row!.id))[0]!;
  }

  /** Revokes a pending invitation; false when the project has no such pending invitation. */
  async deletePendingInvitation(tx: Queryable, projectId: string, id: string): Promise<boolean> {
    const deleted = await tx`delete from invitations where project_id = ${projectId} and id = ${id} and expires_at > now() returning id`;
    return deleted.length > 0;
  }

  /**
   * The pending invitation behind a link, with its project's name; null when unknown or expired. `forUpdate`
   * locks it, so that of two acceptances of one link only the first finds it.
   */
  async findInvitationByToken(tx: Queryable, tokenHash: string, { forUpdate = false } = {}): Promise<LinkedInvitation | null> {
    const [row] = await tx<LinkedInvitation[]>`
      select i.id, i.project_id, p.name as project_name, i.email, i.role, u.name as inviter_name, i.expires_at
      from invitations i join projects p on p.id = i.project_id join users u on u.id = i.invited_by
      where i.token_hash = ${tokenHash} and i.expires_at > now()
      ${forUpdate ? tx`for update of i` : tx``}`;
    return row ?? null;
  }

  /** Uses up an accepted invitation. */
  async deleteInvitation(tx: Queryable, id: string): Promise<void> {
    await tx`delete from invitations where id = ${id}`;
  }

  /**
   * Turns the unexpired invitations for `email` into memberships; returns the project ids joined. Only for an
   * email an identity provider vouches for: an email alone proves nothing (anyone can register any address).
   */
  async redeemInvitations(tx: Queryable, userId: string, email: string): Promise<string[]> {
    const rows = await tx<{ projectId: string }[]>`
      with redeemed as (
        delete from invitations where email = ${email} returning project_id, role, expires_at
      )
      insert into project_members (project_id, user_id, role)
      select project_id, ${userId}, role from redeemed where expires_at > now()
      on conflict do nothing
      returning project_id`;
    return rows.map((row) => row.projectId);
  }
}

const imagesOf = (rows: ({ image: string | null } | undefined)[]): string[] =>
  rows.flatMap((row) => (row?.image ? [row.image] : []));
