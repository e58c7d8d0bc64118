import { ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { StorageService } from './service.js';

/** Storage statistics, GET /api/files/storage (registered before /api/files/:id), and a project's largest files. */
@injectable()
export class StorageRoutes implements Feature {
  constructor(@inject(StorageService) private readonly storage: StorageService) {}

  register(routes: Routes): void {
    routes.on(ROUTES.storageStats, async ({ principal }) => this.storage.stats(principal));
    routes.on(ROUTES.projectLargestFiles, async ({ principal, params, query }) => this.storage.largestFiles(principal, params.id, query));
  }
}
