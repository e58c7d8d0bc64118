import type { Role } from '@bandcollab/sdk/contract';
import { injectable } from 'tsyringe';
import type { Queryable } from './database.js';

/** What a project-scoped id names; the guard resolves each to its project. */
export type Scope = 'project' | 'vibe' | 'cut' | 'file' | 'comment';

/** The tables whose rows carry their project in a `project_id` column. */
const TABLE: Record<Exclude<Scope, 'project' | 'comment'>, string> = { vibe: 'vibes', cut: 'cuts', file: 'files' };

/** Who is a member of which project, read for ProjectAccess. */
@injectable()
export class AccessRepository {
  /**
   * The project of the row `id` names, with the user's role in it (null for a non-member); null when `id`
   * names nothing. Locks nothing.
   */
  async find(tx: Queryable, scope: Scope, id: string, userId: string): Promise<{ projectId: string; role: Role | null } | null> {
    const [row] =
      scope === 'comment'
        ? await tx<{ projectId: string; role: Role | null }[]>`
            select f.project_id, m.role from comments c join files f on f.id = c.file_id
            left join project_members m on m.project_id = f.project_id and m.user_id = ${userId}
            where c.id = ${id}`
        : scope === 'project'
        ? await tx<{ projectId: string; role: Role | null }[]>`
            select p.id as project_id, m.role from projects p
            left join project_members m on m.project_id = p.id and m.user_id = ${userId}
            where p.id = ${id}`
        : await tx<{ projectId: string; role: Role | null }[]>`
            select t.project_id, m.role from ${tx(TABLE[scope])} t
            left join project_members m on m.project_id = t.project_id and m.user_id = ${userId}
            where t.id = ${id}`;
    return row ?? null;
  }
}
