import { ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { sendArchive } from './http.js';
import { ArchivesService } from './service.js';

/** A cut's files as one ZIP download. */
@injectable()
export class ArchivesRoutes implements Feature {
  constructor(@inject(ArchivesService) private readonly archives: ArchivesService) {}

  register(routes: Routes): void {
    // Also with the access_token cookie (declared), as file downloads: a browser link can fetch it.
    routes.on(ROUTES.cutArchive, async ({ req, res, principal, params, query }) => {
      await sendArchive(req, res, await this.archives.forMember(principal, params.id, query.versions));
    });
  }
}
