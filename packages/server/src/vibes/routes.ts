import { createVibeRequest, pathOf, ROUTES, updateVibeRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { trashed } from '../trash/service.js';
import { ProjectAccess } from '../core/project-access.js';
import { ImageForms } from '../images/forms.js';
import { VibesService } from './service.js';

/** Vibes. */
@injectable()
export class VibesRoutes implements Feature {
  constructor(
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(VibesService) private readonly vibes: VibesService,
    @inject(ImageForms) private readonly imageForms: ImageForms,
  ) {}

  register(routes: Routes): void {
    routes.on(ROUTES.createVibe, async ({ req, res, principal, params }) => {
      // Access before the body, as in ProjectsRoutes.
      await this.access.require(principal, 'project', params.projectId);
      const { input, image } = await this.imageForms.read(principal, req, res, createVibeRequest);
      const vibe = await this.vibes.create(principal, params.projectId, { name: input.name, image });
      return { location: pathOf(ROUTES.getVibe, { id: vibe.id }), body: vibe };
    });

    // Before `/api/vibes/:id`, which would otherwise take "reorder" for an id.
    routes.on(ROUTES.reorderVibes, async ({ principal, body }) => this.vibes.reorder(principal, (await body()).vibeIds));

    routes.on(ROUTES.getVibe, async ({ principal, params }) => this.vibes.get(principal, params.id));

    routes.on(ROUTES.updateVibe, async ({ req, res, principal, params }) => {
      await this.access.require(principal, 'vibe', params.id);
      const { input, image } = await this.imageForms.read(principal, req, res, updateVibeRequest);
      return this.vibes.update(principal, params.id, image === null ? input : { ...input, image });
    });

    routes.on(ROUTES.deleteVibe, async ({ principal, params }) => {
      const trashedUntil = await this.vibes.delete(principal, params.id);
      return { id: params.id, deleted: true as const, ...trashed(trashedUntil) };
    });
  }
}
