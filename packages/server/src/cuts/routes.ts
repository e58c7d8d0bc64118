import { pathOf, ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { trashed } from '../trash/service.js';
import { ProjectAccess } from '../core/project-access.js';
import { CutsService } from './service.js';

/** Cuts. */
@injectable()
export class CutsRoutes implements Feature {
  constructor(
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(CutsService) private readonly cuts: CutsService,
  ) {}

  register(routes: Routes): void {
    routes.on(ROUTES.createCut, async ({ principal, params, body }) => {
      // Access before the body, as in ProjectsRoutes.
      await this.access.require(principal, 'vibe', params.vibeId);
      const cut = await this.cuts.create(principal, params.vibeId, (await body()).name);
      return { location: pathOf(ROUTES.getCut, { id: cut.id }), body: cut };
    });

    routes.on(ROUTES.getCut, async ({ principal, params, query }) => this.cuts.get(principal, params.id, query.latest));

    routes.on(ROUTES.updateCut, async ({ principal, params, body }) => {
      await this.access.require(principal, 'cut', params.id);
      return this.cuts.rename(principal, params.id, (await body()).name);
    });

    routes.on(ROUTES.moveCut, async ({ principal, params, body }) => {
      await this.access.require(principal, 'cut', params.id);
      return this.cuts.move(principal, params.id, (await body()).targetVibeId);
    });

    routes.on(ROUTES.deleteCut, async ({ principal, params }) => {
      const trashedUntil = await this.cuts.delete(principal, params.id);
      return { id: params.id, deleted: true as const, ...trashed(trashedUntil) };
    });
  }
}
