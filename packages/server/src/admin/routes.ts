import { ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { AdminJobsService, AdminService } from './service.js';

/** Site administration for a site ADMIN: storage by user or project, accounts and their deactivation, the job queue. */
@injectable()
export class AdminRoutes implements Feature {
  constructor(
    @inject(AdminService) private readonly admin: AdminService,
    @inject(AdminJobsService) private readonly jobs: AdminJobsService,
  ) {}

  register(routes: Routes): void {
    routes.on(ROUTES.adminStorage, async ({ principal, query }) => this.admin.storage(principal, query));

    routes.on(ROUTES.adminListUsers, async ({ principal }) => this.admin.users(principal));

    routes.on(ROUTES.adminSetUserActive, async ({ principal, params, body }) => {
      // Access before the body, as in ProjectsRoutes.
      this.admin.authorize(principal);
      const { active } = await body();
      return this.admin.setActive(principal, params.id, active);
    });

    routes.on(ROUTES.adminJobs, async ({ principal, query }) => this.jobs.overview(principal, query));

    routes.on(ROUTES.adminRetryJob, async ({ principal, params }) => this.jobs.retry(principal, params.id));
  }
}
