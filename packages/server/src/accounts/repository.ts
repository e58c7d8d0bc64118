import type { Role } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import type { UserRow } from '../auth/repository.js';
import type { StoredImage } from '../images/repository.js';

/** One project of an account, as deleting the account weighs it. */
export interface Membership {
  projectId: string;
  projectName: string;
  role: Role;
}

/** The changes an account's owner (or the reset-password command) makes to it. */
@injectable()
export class AccountsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** Locks the account's row until `tx` ends, so changes to one account take turns. */
  async lock(tx: Queryable, userId: string): Promise<UserRow | null> {
    const [row] = await tx<UserRow[]>`select * from users where id = ${userId} for update`;
    return row ?? null;
  }

  async setName(tx: Queryable, userId: string, name: string): Promise<UserRow> {
    const [row] = await tx<UserRow[]>`update users set name = ${name} where id = ${userId} returning *`;
    return row!;
  }

  /** A newly stored avatar, or null to clear; the one it replaces leaves stored_images by trigger (migration 012). */
  async setAvatar(tx: Queryable, userId: string, image: StoredImage | null): Promise<UserRow> {
    const [row] = await tx<UserRow[]>`
      update users set avatar = ${image?.name ?? null}, avatar_sha256 = ${image?.sha256 ?? null}
      where id = ${userId} returning *`;
    return row!;
  }

  async findIdByEmail(tx: Queryable, email: string): Promise<string | null> {
    const [row] = await tx<{ id: string }[]>`select id from users where email = ${email}`;
    return row?.id ?? null;
  }

  /** The account's projects, by id: the order their locks are taken in. */
  async memberships(tx: Queryable, userId: string): Promise<Membership[]> {
    return tx<Membership[]>`
      select m.project_id, p.name as project_name, m.role
      from project_members m join projects p on p.id = m.project_id
      where m.user_id = ${userId}
      order by m.project_id`;
  }

  /**
   * Deletes the account. What signs in as it goes with it (sessions, refresh tokens, identities, personal
   * access tokens), and the links and invitations it made; its files stay with no uploader (migration 012).
   */
  async delete(tx: Queryable, userId: string): Promise<void> {
    await tx`delete from users where id = ${userId}`;
  }

  /** The sha256 of the avatar stored under `name`; null when no account has it. */
  async findAvatarSha256(name: string): Promise<string | null> {
    const [row] = await this.sql<{ avatarSha256: string }[]>`select avatar_sha256 from users where avatar = ${name}`;
    return row?.avatarSha256 ?? null;
  }
}
