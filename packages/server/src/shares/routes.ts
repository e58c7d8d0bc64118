import type { App, Request } from '@tinyhttp/app';
import { shareRequest } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard } from '../core/auth-guard.js';
import { DomainError } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import { sendHtml } from '../core/html-page.js';
import { idParam, jsonBody, sendCreated, sendJson } from '../core/http.js';
import { ProjectAccess } from '../core/project-access.js';
import { sendStoredBytes } from '../core/transfer.js';
import { FilesService } from '../files/service.js';
import { renderNotFoundPage, renderSharePage, SHARE_PAGE_CSP } from './page.js';
import { SharesService } from './service.js';

/** Share links, the public share endpoint and the /share/:token page. */
@injectable()
export class SharesRoutes implements Feature {
  constructor(
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(SharesService) private readonly shares: SharesService,
    @inject(FilesService) private readonly files: FilesService,
  ) {}

  register(app: App): void {
    app.get('/api/share/:token', async (req, res) => {
      const token = req.params.token ?? '';
      const { file, expiresAt } = await this.shares.resolve(token);
      res.setHeader('Vary', 'Accept');
      if (acceptsJson(req)) {
        sendJson(res, 200, this.shares.describe(token, { file, expiresAt }));
        return;
      }
      await sendStoredBytes(req, res, this.files.bytesOf(file), req.query.download === '1' ? 'attachment' : 'inline');
    });

    app.get('/api/share/:token/peaks', async (req, res) => {
      const { file } = await this.shares.resolve(req.params.token ?? '');
      sendJson(res, 200, await this.files.peaksOf(file.id));
    });

    app.get('/share/:token', async (req, res) => {
      const token = req.params.token ?? '';
      try {
        const { file, expiresAt } = await this.shares.resolve(token);
        sendHtml(req, res, 200, renderSharePage({
          name: file.name,
          type: file.type,
          size: file.size,
          expiresAt,
          bytesPath: `/api/share/${token}`,
          downloadPath: `/api/share/${token}?download=1`,
          audio: file.audio,
          peaks: file.audio ? await this.files.waveform(file.id) : null,
        }), SHARE_PAGE_CSP);
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'NOT_FOUND')) throw error;
        sendHtml(req, res, 404, renderNotFoundPage(), SHARE_PAGE_CSP);
      }
    });

    app.post('/api/files/:id/share', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const fileId = idParam(req, 'id', 'File');
      // Access before the body, as in ProjectsRoutes: a stranger gets 404 whatever it sends.
      await this.access.require(principal, 'file', fileId);
      const { expiresIn } = await jsonBody(req, res, shareRequest);
      const link = await this.shares.create(principal, fileId, expiresIn ?? null);
      sendCreated(res, `/api/share/${link.token}`, link);
    });

    app.delete('/api/files/:id/share', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.shares.revokeAll(principal, idParam(req, 'id', 'File')));
    });
  }
}

/** Whether the Accept header names application/json (with a non-zero quality). */
function acceptsJson(req: Request): boolean {
  return (req.headers.accept ?? '').split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    return type === 'application/json' && !params.some((param) => /^q=0(\.0*)?$/.test(param));
  });
}
