import { createVibeRequest, reorderVibesRequest, updateVibeRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard } from '../core/auth-guard.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { idParam, jsonBody, sendCreated, sendJson } from '../core/http.js';
import { ProjectAccess } from '../core/project-access.js';
import { ImageForms } from '../images/forms.js';
import { VibesService } from './service.js';

/** Vibes. */
@injectable()
export class VibesRoutes implements Feature {
  constructor(
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(VibesService) private readonly vibes: VibesService,
    @inject(ImageForms) private readonly imageForms: ImageForms,
  ) {}

  register({ app }: Routes): void {
    app.post('/api/projects/:projectId/vibes', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const projectId = idParam(req, 'projectId', 'Project');
      // Access before the body, as in ProjectsRoutes.
      await this.access.require(principal, 'project', projectId);
      const { input, image } = await this.imageForms.read(principal, req, res, createVibeRequest);
      const vibe = await this.vibes.create(principal, projectId, { name: input.name, image });
      sendCreated(res, `/api/vibes/${vibe.id}`, vibe);
    });

    // Before `/api/vibes/:id`, which would otherwise take "reorder" for an id.
    app.put('/api/vibes/reorder', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const { vibeIds } = await jsonBody(req, res, reorderVibesRequest);
      sendJson(res, 200, await this.vibes.reorder(principal, vibeIds));
    });

    app.get('/api/vibes/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.vibes.get(principal, idParam(req, 'id', 'Vibe')));
    });

    app.put('/api/vibes/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const vibeId = idParam(req, 'id', 'Vibe');
      await this.access.require(principal, 'vibe', vibeId);
      const { input, image } = await this.imageForms.read(principal, req, res, updateVibeRequest);
      sendJson(res, 200, await this.vibes.update(principal, vibeId, image === null ? input : { ...input, image }));
    });

    app.delete('/api/vibes/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const vibeId = idParam(req, 'id', 'Vibe');
      await this.vibes.delete(principal, vibeId);
      sendJson(res, 200, { id: vibeId, deleted: true });
    });
  }
}
