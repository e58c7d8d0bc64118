import type { Role } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AccessRepository, type Scope } from './access-repository.js';
import { type Principal, reaches } from './auth-guard.js';
import type { Queryable, Sql } from './database.js';
import { SQL } from './di.js';
import { forbidden, notFound } from './errors.js';

export type { Scope };

export interface Access {
  projectId: string;
  /** The caller's membership role in that project. */
  role: Role;
}

const LABEL: Record<Scope, string> = { project: 'Project', vibe: 'Vibe', cut: 'Cut', file: 'File', comment: 'Comment' };

/**
 * The one place that decides access inside projects: non-members get 404 for everything
 * (existence is not leaked, site ADMINs included), a MEMBER gets 403 for ADMIN actions, and a project
 * outside a personal access token's projects does not exist for it (404).
 * Every project-scoped route goes through `require`; no handler re-implements it.
 */
@injectable()
export class ProjectAccess {
  constructor(
    @inject(SQL) private readonly sql: Sql,
    @inject(AccessRepository) private readonly repository: AccessRepository,
  ) {}

  /** Pass `tx` to check inside the transaction that does the work, after the locks it took; the check itself locks nothing. */
  async require(principal: Principal, scope: Scope, id: string, need: Role = 'MEMBER', tx: Queryable = this.sql): Promise<Access> {
    const found = await this.repository.find(tx, scope, id, principal.userId);
    if (!found || found.role === null || !reaches(principal, found.projectId)) throw notFound(LABEL[scope]);
    if (need === 'ADMIN' && found.role !== 'ADMIN') throw forbidden();
    return { projectId: found.projectId, role: found.role };
  }
}
