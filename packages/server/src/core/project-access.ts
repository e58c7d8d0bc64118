import type { Role } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from './database.js';
import { SQL } from './di.js';
import { forbidden, notFound } from './errors.js';
import type { Principal } from './auth-guard.js';

/** What a project-scoped id names; the guard resolves each to its project. */
export type Scope = 'project' | 'vibe' | 'cut' | 'file';

export interface Access {
  projectId: string;
  /** The caller's membership role in that project. */
  role: Role;
}

type AccessRow = { project_id: string; role: Role | null };

const LABEL: Record<Scope, string> = { project: 'Project', vibe: 'Vibe', cut: 'Cut', file: 'File' };
/** The tables whose rows carry their project in a `project_id` column. */
const TABLE: Record<Exclude<Scope, 'project'>, string> = { vibe: 'vibes', cut: 'cuts', file: 'files' };

/**
 * The one place that decides access inside projects: non-members get 404 for everything
 * (existence is not leaked, site ADMINs included), a MEMBER gets 403 for ADMIN actions.
 * Every project-scoped route goes through `require`; no handler re-implements it.
 */
@injectable()
export class ProjectAccess {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** Pass `tx` to check inside the transaction that does the work, after the locks it took; the check itself locks nothing. */
  async require(principal: Principal, scope: Scope, id: string, need: Role = 'MEMBER', tx: Queryable = this.sql): Promise<Access> {
    const [row] = await this.lookup(tx, scope, id, principal.userId);
    if (!row || row.role === null) throw notFound(LABEL[scope]);
    if (need === 'ADMIN' && row.role !== 'ADMIN') throw forbidden();
    return { projectId: row.project_id, role: row.role };
  }

  /** The project of the row `id` names, with the user's role in it (null for a non-member); no row when `id` names nothing. */
  private lookup(tx: Queryable, scope: Scope, id: string, userId: string): Promise<AccessRow[]> {
    if (scope === 'project') {
      return tx<AccessRow[]>`
        select p.id as project_id, m.role from projects p
        left join project_members m on m.project_id = p.id and m.user_id = ${userId}
        where p.id = ${id}`;
    }
    return tx<AccessRow[]>`
      select t.project_id, m.role from ${tx(TABLE[scope])} t
      left join project_members m on m.project_id = t.project_id and m.user_id = ${userId}
      where t.id = ${id}`;
  }
}
