import { deleteFileQuery, isUuid, ROUTES, stemEntriesQuery, uploadFields, uploadQuery } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { AuthGuard } from '../core/auth-guard.js';
import { invalidField } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { idParam, sendCreated, sendJson, validate } from '../core/http.js';
import { Multipart } from '../core/multipart.js';
import { ProjectAccess } from '../core/project-access.js';
import { sendStoredBytes } from '../core/transfer.js';
import { FilesService } from './service.js';

/** File upload, read, download, media paths and delete. */
@injectable()
export class FilesRoutes implements Feature {
  constructor(
    @inject(AuthGuard) private readonly guard: AuthGuard,
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(Multipart) private readonly multipart: Multipart,
    @inject(FilesService) private readonly files: FilesService,
  ) {}

  /** tinyhttp runs the first route of a path for HEAD, whatever its method: GET routes come first. */
  register(routes: Routes): void {
    const { app } = routes;
    routes.on(ROUTES.fileVersions, async ({ principal, params }) => this.files.versions(principal, params.id));

    app.get('/api/files/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.files.get(principal, idParam(req, 'id', 'File')));
    });

    app.get('/api/files/:id/peaks', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      sendJson(res, 200, await this.files.peaks(principal, idParam(req, 'id', 'File')));
    });

    app.get('/api/files/:id/entries', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const page = validate(stemEntriesQuery, req.query);
      sendJson(res, 200, await this.files.stemEntries(principal, idParam(req, 'id', 'File'), page));
    });

    // Downloads and media paths also take the access_token cookie, so an <audio> element can play and seek.
    app.get('/api/files/:id/download', async (req, res) => {
      const principal = await this.guard.authenticate(req, { allowCookie: true });
      await sendStoredBytes(req, res, await this.files.bytes(principal, idParam(req, 'id', 'File')), 'attachment');
    });

    app.get('/uploads/files/:name', async (req, res) => {
      const principal = await this.guard.authenticate(req, { allowCookie: true });
      await sendStoredBytes(req, res, await this.files.bytesByStoredName(principal, req.params.name ?? ''), 'inline');
    });

    app.post('/api/files/upload', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      // An unchanged version is refused before any byte is read: from the query, or as soon as its field arrives.
      const ifNoneMatch = typeof req.headers['if-none-match'] === 'string' ? req.headers['if-none-match'] : null;
      const { versionOf: queryVersionOf } = validate(uploadQuery, req.query);
      if (queryVersionOf) await this.files.versionTarget(principal, queryVersionOf, { ifNoneMatch });
      // Access before the bytes, as in ProjectsRoutes: a cutId or versionOf sent before the file is checked before any byte is stored.
      const upload = await this.multipart.receive(req, res, {
        owner: principal.userId,
        fileField: 'file',
        types: ['CUT', 'STEM', 'IMAGE'],
        onField: async (name, value) => {
          if (name === 'cutId' && isUuid(value)) await this.access.require(principal, 'cut', value.toLowerCase());
          if (name === 'versionOf' && isUuid(value)) await this.files.versionTarget(principal, value.toLowerCase(), { ifNoneMatch });
        },
      });
      const fields = await this.multipart.validFields({ ...upload, fields: { ...(queryVersionOf ? { versionOf: queryVersionOf } : {}), ...upload.fields } }, uploadFields);
      if (!upload.file) throw invalidField('file', 'is required');
      const versionOf = fields.versionOf ?? queryVersionOf;
      const file = await this.files.upload(principal, {
        cutId: fields.cutId ?? null,
        series: versionOf ? { fileId: versionOf } : null,
        name: fields.name ?? null,
        originalName: upload.file.originalName,
        file: upload.file,
      });
      sendCreated(res, `/api/files/${file.id}`, file);
    });

    app.delete('/api/files/:id', async (req, res) => {
      const principal = await this.guard.authenticate(req);
      const fileId = idParam(req, 'id', 'File');
      if (validate(deleteFileQuery, req.query).series === 'all') {
        sendJson(res, 200, await this.files.deleteSeries(principal, fileId));
        return;
      }
      await this.files.delete(principal, fileId);
      sendJson(res, 200, { id: fileId, deleted: true });
    });
  }

  async start(): Promise<void> {
    await this.files.sweep();
  }
}
