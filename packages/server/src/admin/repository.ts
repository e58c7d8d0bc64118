import type { FileType, Role } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

export interface AccountRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  createdAt: Date;
  deactivatedAt: Date | null;
  lastSignInAt: Date | null;
}

/** Bytes and files of one type, for one user or project (`ownerId`). */
export interface OwnedUsage {
  ownerId: string;
  type: FileType | 'PREVIEW';
  size: number;
  count: number;
}

export interface OwnedIncompleteUploads {
  ownerId: string;
  count: number;
  receivedBytes: number;
  lengthBytes: number;
}

export interface AccountShareLinkRow {
  id: string;
  kind: 'file' | 'cut';
  targetId: string;
  name: string;
  projectId: string;
  createdAt: Date;
  expiresAt: Date | null;
}

const ACCOUNT_COLUMNS = (sql: Queryable) => sql`
  u.id, u.email, u.name, u.role, u.created_at, u.deactivated_at,
  (select max(s.created_at) from sessions s where s.user_id = u.id) as last_sign_in_at`;

/**
 * What a site ADMIN sees of the whole site. Sizes are summed as bigint (exact) and read as numbers. An
 * incomplete upload is one neither completed nor expired (the purge removes expired ones).
 */
@injectable()
export class AdminRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  async accounts(): Promise<AccountRow[]> {
    return this.sql<AccountRow[]>`select ${ACCOUNT_COLUMNS(this.sql)} from users u order by u.email`;
  }

  async findIdByEmail(email: string): Promise<string | null> {
    const [row] = await this.sql<{ id: string }[]>`select id from users where email = ${email}`;
    return row?.id ?? null;
  }

  /**
   * Marks the account deactivated (keeping the first time it was) or active again, within `tx`; the row lock
   * this takes makes a sign-in running meanwhile wait, then see it (AuthRepository.lockActiveUser).
   */
  async setActive(tx: Queryable, userId: string, active: boolean): Promise<AccountRow | null> {
    const [row] = await tx<AccountRow[]>`
      with updated as (
        update users set deactivated_at = ${active ? null : tx`coalesce(deactivated_at, now())`}
        where id = ${userId} returning *
      )
      select ${ACCOUNT_COLUMNS(tx)} from updated u`;
    return row ?? null;
  }

  /** The unexpired share links `userId` made, file and cut links, oldest first. */
  async liveShareLinks(tx: Queryable, userId: string): Promise<AccountShareLinkRow[]> {
    return tx<AccountShareLinkRow[]>`
      select s.id, case when s.file_id is null then 'cut' else 'file' end as kind, coalesce(s.file_id, s.cut_id) as target_id,
             coalesce(f.name, c.name) as name, coalesce(f.project_id, c.project_id) as project_id, s.created_at, s.expires_at
      from share_links s
      left join files f on f.id = s.file_id
      left join cuts c on c.id = s.cut_id
      where s.created_by = ${userId} and (s.expires_at is null or s.expires_at > now())
      order by s.created_at, s.id`;
  }

  /** Per uploader and type: their files and the images they uploaded (covers, vibe images, avatars), as the quota counts them. */
  async usageByUser(): Promise<OwnedUsage[]> {
    return this.sql<OwnedUsage[]>`
      select uploaded_by as owner_id, type, sum(size)::bigint as size, count(*)::int as count from (
        select uploaded_by, type, size from public.files where uploaded_by is not null
        union all
        select uploaded_by, 'PREVIEW', preview_bytes from public.files where uploaded_by is not null and preview_bytes is not null
        union all
        select f.uploaded_by, 'PREVIEW', e.preview_bytes from public.stem_entries e join public.files f on f.id = e.file_id
        where f.uploaded_by is not null and e.preview_bytes is not null
        union all
        select uploaded_by, 'IMAGE', size from stored_images where uploaded_by is not null
      ) uploads
      group by uploaded_by, type`;
  }

  /** Per project and type: every member's files, the project's cover and its vibes' images. */
  async usageByProject(): Promise<OwnedUsage[]> {
    return this.sql<OwnedUsage[]>`
      select project_id as owner_id, type, sum(size)::bigint as size, count(*)::int as count from (
        select project_id, type, size from public.files
        union all
        select project_id, 'PREVIEW', preview_bytes from public.files where preview_bytes is not null
        union all
        select f.project_id, 'PREVIEW', e.preview_bytes from public.stem_entries e join public.files f on f.id = e.file_id where e.preview_bytes is not null
        union all
        select p.id, 'IMAGE', s.size from stored_images s join public.projects p on p.image = s.name
        union all
        select v.project_id, 'IMAGE', s.size from stored_images s join public.vibes v on v.image = s.name
      ) uploads
      group by project_id, type`;
  }

  async incompleteUploadsByUser(): Promise<OwnedIncompleteUploads[]> {
    return this.sql<OwnedIncompleteUploads[]>`
      select owner_id, count(*)::int as count, sum(received)::bigint as received_bytes, sum(length)::bigint as length_bytes
      from resumable_uploads where completed_at is null and expires_at > now()
      group by owner_id`;
  }

  async incompleteUploadsByProject(): Promise<OwnedIncompleteUploads[]> {
    return this.sql<OwnedIncompleteUploads[]>`
      select c.project_id as owner_id, count(*)::int as count, sum(r.received)::bigint as received_bytes, sum(r.length)::bigint as length_bytes
      from resumable_uploads r join cuts c on c.id = r.cut_id
      where r.completed_at is null and r.expires_at > now()
      group by c.project_id`;
  }

  async projects(): Promise<{ id: string; name: string }[]> {
    return this.sql<{ id: string; name: string }[]>`select id, name from projects order by name, id`;
  }
}
