import { cutNameRequest, latestFilesQuery, moveCutRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard } from '../core/auth-guard.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { idParam, jsonBody, sendCreated, sendJson, validate } from '../core/http.js';
import { ProjectAccess } from '../core/project-access.js';
import { CutsService } from './service.js';

/** Cuts. */
@injectable()
export class CutsRoutes implements Feature {
  constructor(
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(CutsService) private readonly cuts: CutsService,
  ) {}

  register({ app }: Routes): void {
    app.post('/api/vibes/:vibeId/cuts', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const vibeId = idParam(req, 'vibeId', 'Vibe');
      // Access before the body, as in ProjectsRoutes.
      await this.access.require(principal, 'vibe', vibeId);
      const { name } = await jsonBody(req, res, cutNameRequest);
      const cut = await this.cuts.create(principal, vibeId, name);
      sendCreated(res, `/api/cuts/${cut.id}`, cut);
    });

    app.get('/api/cuts/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.cuts.get(principal, idParam(req, 'id', 'Cut'), validate(latestFilesQuery, req.query).latest));
    });

    app.put('/api/cuts/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const cutId = idParam(req, 'id', 'Cut');
      await this.access.require(principal, 'cut', cutId);
      const { name } = await jsonBody(req, res, cutNameRequest);
      sendJson(res, 200, await this.cuts.rename(principal, cutId, name));
    });

    app.put('/api/cuts/:id/move', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const cutId = idParam(req, 'id', 'Cut');
      await this.access.require(principal, 'cut', cutId);
      const { targetVibeId } = await jsonBody(req, res, moveCutRequest);
      sendJson(res, 200, await this.cuts.move(principal, cutId, targetVibeId));
    });

    app.delete('/api/cuts/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const cutId = idParam(req, 'id', 'Cut');
      await this.cuts.delete(principal, cutId);
      sendJson(res, 200, { id: cutId, deleted: true });
    });
  }
}
