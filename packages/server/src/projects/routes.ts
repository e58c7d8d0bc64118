import { createProjectRequest, latestFilesQuery, updateMemberRequest, updateProjectRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard, requireEveryProject } from '../core/auth-guard.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { idParam, jsonBody, sendCreated, sendJson, validate } from '../core/http.js';
import { ProjectAccess } from '../core/project-access.js';
import { sendStoredBytes } from '../core/transfer.js';
import { ImageForms } from '../images/forms.js';
import { ProjectsService } from './service.js';

/** Projects and members, and the images of projects and vibes. */
@injectable()
export class ProjectsRoutes implements Feature {
  constructor(
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(ProjectsService) private readonly projects: ProjectsService,
    @inject(ImageForms) private readonly imageForms: ImageForms,
  ) {}

  /**
   * Routes with a body check access before reading it, so a stranger gets 404 and a MEMBER 403 whatever
   * they send, and no image is stored for them; the services check again inside their transactions.
   */
  register({ app }: Routes): void {
    app.get('/api/projects', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.projects.list(principal));
    });

    app.post('/api/projects', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      // Before the form is read: a refused request stores no image (the service checks it again, too late for that).
      requireEveryProject(principal, 'create projects');
      const { input, image } = await this.imageForms.read(principal, req, res, createProjectRequest);
      const project = await this.projects.create(principal, { name: input.name, description: input.description ?? null, image });
      sendCreated(res, `/api/projects/${project.id}`, project);
    });

    app.get('/api/projects/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.projects.detail(principal, idParam(req, 'id', 'Project'), validate(latestFilesQuery, req.query).latest));
    });

    app.put('/api/projects/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const projectId = idParam(req, 'id', 'Project');
      await this.access.require(principal, 'project', projectId, 'ADMIN');
      const { input, image } = await this.imageForms.read(principal, req, res, updateProjectRequest);
      const changes = image === null ? input : { ...input, image };
      sendJson(res, 200, await this.projects.update(principal, projectId, changes));
    });

    app.delete('/api/projects/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const projectId = idParam(req, 'id', 'Project');
      await this.projects.delete(principal, projectId);
      sendJson(res, 200, { id: projectId, deleted: true });
    });

    app.put('/api/projects/:id/members/:userId', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const projectId = idParam(req, 'id', 'Project');
      const userId = idParam(req, 'userId', 'Member');
      await this.access.require(principal, 'project', projectId, 'ADMIN');
      const { role } = await jsonBody(req, res, updateMemberRequest);
      sendJson(res, 200, await this.projects.setRole(principal, projectId, userId, role));
    });

    app.delete('/api/projects/:id/members/:userId', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const projectId = idParam(req, 'id', 'Project');
      const userId = idParam(req, 'userId', 'Member');
      await this.projects.removeMember(principal, projectId, userId);
      sendJson(res, 200, { id: userId, deleted: true });
    });

    // Also answers HEAD: tinyhttp runs a path's GET route for it.
    app.get('/uploads/images/:name', async (req, res) => {
      const principal = await this.guard.authenticate(req, { allowCookie: true });
      await sendStoredBytes(req, res, await this.projects.image(principal, req.params.name ?? ''), 'inline');
    });
  }
}
