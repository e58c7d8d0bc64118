import { inject, injectable } from 'tsyringe';
import { AuthGuard } from '../core/auth-guard.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { sendJson } from '../core/http.js';
import { StorageService } from './service.js';

/** Storage statistics, GET /api/files/storage; registered before /api/files/:id. */
@injectable()
export class StorageRoutes implements Feature {
  constructor(
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(StorageService) private readonly storage: StorageService,
  ) {}

  register({ app }: Routes): void {
    app.get('/api/files/storage', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.storage.stats(principal));
    });
  }
}
