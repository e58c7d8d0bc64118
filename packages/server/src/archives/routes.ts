import { archiveQuery } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard } from '../core/auth-guard.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { idParam, validate } from '../core/http.js';
import { sendArchive } from './http.js';
import { ArchivesService } from './service.js';

/** A cut's files as one ZIP download. */
@injectable()
export class ArchivesRoutes implements Feature {
  constructor(
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(ArchivesService) private readonly archives: ArchivesService,
  ) {}

  register({ app }: Routes): void {
    // Also with the access_token cookie, as file downloads: a browser link can fetch it.
    app.get('/api/cuts/:id/archive', async (req, res) => {
      const principal = await this.guard.authenticate(req, { allowCookie: true });
      await sendArchive(req, res, await this.archives.forMember(principal, idParam(req, 'id', 'Cut'), validate(archiveQuery, req.query).versions));
    });
  }
}
