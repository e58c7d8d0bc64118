import { createProjectRequest, pathOf, ROUTES, updateProjectRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { requireEveryProject } from '../core/auth-guard.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { trashed } from '../trash/service.js';
import { ProjectAccess } from '../core/project-access.js';
import { sendStoredBytes } from '../core/transfer.js';
import { ImageForms } from '../images/forms.js';
import { ProjectsService } from './service.js';

/** Projects and members, and the images of projects and vibes. */
@injectable()
export class ProjectsRoutes implements Feature {
  constructor(
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(ProjectsService) private readonly projects: ProjectsService,
    @inject(ImageForms) private readonly imageForms: ImageForms,
  ) {}

  /**
   * Routes with a body check access before reading it, so a stranger gets 404 and a MEMBER 403 whatever
   * they send, and no image is stored for them; the services check again inside their transactions.
   */
  register(routes: Routes): void {
    routes.on(ROUTES.listProjects, async ({ principal }) => this.projects.list(principal));

    routes.on(ROUTES.createProject, async ({ req, res, principal }) => {
      // Before the form is read: a refused request stores no image (the service checks it again, too late for that).
      requireEveryProject(principal, 'create projects');
      const { input, image } = await this.imageForms.read(principal, req, res, createProjectRequest);
      const project = await this.projects.create(principal, { name: input.name, description: input.description ?? null, image });
      return { location: pathOf(ROUTES.getProject, { id: project.id }), body: project };
    });

    routes.on(ROUTES.getProject, async ({ principal, params, query }) =>
      this.projects.detail(principal, params.id, query.latest),
    );

    routes.on(ROUTES.updateProject, async ({ req, res, principal, params }) => {
      await this.access.require(principal, 'project', params.id, 'ADMIN');
      const { input, image } = await this.imageForms.read(principal, req, res, updateProjectRequest);
      return this.projects.update(principal, params.id, image === null ? input : { ...input, image });
    });

    routes.on(ROUTES.deleteProject, async ({ principal, params }) => {
      const trashedUntil = await this.projects.delete(principal, params.id);
      return { id: params.id, deleted: true as const, ...trashed(trashedUntil) };
    });

    routes.on(ROUTES.setMemberRole, async ({ principal, params, body }) => {
      await this.access.require(principal, 'project', params.id, 'ADMIN');
      return this.projects.setRole(principal, params.id, params.userId, (await body()).role);
    });

    routes.on(ROUTES.removeMember, async ({ principal, params }) => {
      await this.projects.removeMember(principal, params.id, params.userId);
      return { id: params.userId, deleted: true };
    });

    // Also answers HEAD: tinyhttp runs a path's GET route for it.
    routes.on(ROUTES.mediaImage, async ({ req, res, principal, params }) => {
      await sendStoredBytes(req, res, await this.projects.image(principal, params.name), 'inline');
    });
  }
}
