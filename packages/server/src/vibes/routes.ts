import type { App } from '@tinyhttp/app';
import { inject, injectable } from 'tsyringe';
import { z } from 'zod';
import { AuthGuard } from '../core/auth-guard.js';
import type { Feature } from '../core/feature.js';
import { idParam, jsonBody, sendCreated, sendJson } from '../core/http.js';
import { ProjectAccess } from '../core/project-access.js';
import { nameSchema, uuidSchema } from '../core/validation.js';
import { clearImageField, Images } from '../projects/images.js';
import { VibesService } from './service.js';

const createSchema = z.object({ name: nameSchema });
const updateSchema = z.object({
  name: nameSchema.optional(),
  image: clearImageField,
});
const reorderSchema = z.object({
  vibeIds: z
    .array(uuidSchema, { error: 'must be an array of vibe ids' })
    .min(1, 'must not be empty')
    .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an id'),
});

/** Vibes (API.md §5). */
@injectable()
export class VibesRoutes implements Feature {
  constructor(
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(VibesService) private readonly vibes: VibesService,
    @inject(Images) private readonly images: Images,
  ) {}

  register(app: App): void {
    app.post('/api/projects/:projectId/vibes', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const projectId = idParam(req, 'projectId', 'Project');
      // Access before the body, as in ProjectsRoutes.
      await this.access.require(principal, 'project', projectId);
      const { input, image } = await this.images.readBody(principal, req, res, createSchema);
      const vibe = await this.vibes.create(principal, projectId, { name: input.name, image });
      sendCreated(res, `/api/vibes/${vibe.id}`, vibe);
    });

    // Before `/api/vibes/:id`, which would otherwise take "reorder" for an id.
    app.put('/api/vibes/reorder', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const { vibeIds } = await jsonBody(req, res, reorderSchema);
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
      const { input, image } = await this.images.readBody(principal, req, res, updateSchema);
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
