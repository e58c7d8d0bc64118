import { ROUTES as ROUTES, trashKind } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { notFound } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { TrashService } from './service.js';

/** The trash's lists, restores and purges (§21); deletes move things there through TrashService.move. */
@injectable()
export class TrashRoutes implements Feature {
  constructor(@inject(TrashService) private readonly trash: TrashService) {}

  /** GET before DELETE: a HEAD is answered only where a path's first route is a GET. */
  register(routes: Routes): void {
    routes.on(ROUTES.listProjectTrash, async ({ principal, params }) => this.trash.listOfProject(principal, params.id));
    routes.on(ROUTES.emptyProjectTrash, async ({ principal, params }) => this.trash.empty(principal, params.id));
    routes.on(ROUTES.listTrash, async ({ principal }) => this.trash.listOfUser(principal));
    routes.on(ROUTES.restoreTrash, async ({ principal, params }) => this.trash.restore(principal, kindOf(params.kind), params.id));
    routes.on(ROUTES.purgeTrash, async ({ principal, params }) => this.trash.purge(principal, kindOf(params.kind), params.id));
  }
}

/** An unknown kind names nothing in the trash. */
function kindOf(kind: string) {
  const parsed = trashKind.safeParse(kind);
  if (!parsed.success) throw notFound('Trashed thing');
  return parsed.data;
}
