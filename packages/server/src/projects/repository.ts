import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

@injectable()
export class ProjectsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** Turns the unexpired invitations for `email` into memberships; returns the project ids joined. */
  async redeemInvitations(tx: Queryable, userId: string, email: string): Promise<string[]> {
    const rows = await tx<{ project_id: string }[]>`
      with redeemed as (
        delete from invitations where email = ${email} returning project_id, role, expires_at
      )
      insert into project_members (project_id, user_id, role)
      select project_id, ${userId}, role from redeemed where expires_at > now()
      on conflict do nothing
      returning project_id`;
    return rows.map((row) => row.project_id);
  }
}
