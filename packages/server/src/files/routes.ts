import { isUuid, pathOf, ROUTES, stemEntriesQuery, uploadFields } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { invalidField } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { validate } from '../core/http.js';
import { Multipart } from '../core/multipart.js';
import { ProjectAccess } from '../core/project-access.js';
import { sendStoredBytes } from '../core/transfer.js';
import { FilesService } from './service.js';

/** File upload, read, download, media paths and delete. */
@injectable()
export class FilesRoutes implements Feature {
  constructor(
    @inject(ProjectAccess) private readonly access: ProjectAccess,
    @inject(Multipart) private readonly multipart: Multipart,
    @inject(FilesService) private readonly files: FilesService,
  ) {}

  /** tinyhttp runs the first route of a path for HEAD, whatever its method: GET routes come first. */
  register(routes: Routes): void {
    routes.on(ROUTES.getFile, async ({ principal, params }) => this.files.get(principal, params.id));

    routes.on(ROUTES.filePeaks, async ({ principal, params }) => this.files.peaks(principal, params.id));

    routes.on(ROUTES.stemEntries, async ({ req, principal, params }) => this.files.stemEntries(principal, params.id, validate(stemEntriesQuery, req.query)));

    // Downloads and media paths also take the access_token cookie (declared), so an <audio> element can play and seek.
    routes.on(ROUTES.downloadFile, async ({ req, res, principal, params }) => {
      await sendStoredBytes(req, res, await this.files.bytes(principal, params.id), 'attachment');
    });

    routes.on(ROUTES.mediaFile, async ({ req, res, principal, params }) => {
      await sendStoredBytes(req, res, await this.files.bytesByStoredName(principal, params.name), 'inline');
    });

    routes.on(ROUTES.uploadFile, async ({ req, res, principal }) => {
      // Access before the bytes, as in ProjectsRoutes: a cutId sent before the file is checked before any byte is stored.
      const upload = await this.multipart.receive(req, res, {
        owner: principal.userId,
        fileField: 'file',
        types: ['CUT', 'STEM', 'IMAGE'],
        onField: async (name, value) => {
          if (name === 'cutId' && isUuid(value)) await this.access.require(principal, 'cut', value.toLowerCase());
        },
      });
      const fields = await this.multipart.validFields(upload, uploadFields);
      if (!upload.file) throw invalidField('file', 'is required');
      const file = await this.files.upload(principal, { cutId: fields.cutId, name: fields.name ?? upload.file.originalName, file: upload.file });
      return { location: pathOf(ROUTES.getFile, { id: file.id }), body: file };
    });

    routes.on(ROUTES.deleteFile, async ({ principal, params }) => {
      await this.files.delete(principal, params.id);
      return { id: params.id, deleted: true };
    });
  }

  async start(): Promise<void> {
    await this.files.sweep();
  }
}
