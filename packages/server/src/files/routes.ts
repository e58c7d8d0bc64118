import { pathOf, ROUTES, uploadFields } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { invalidField } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { RouteContext, Routes } from '../core/routes.js';
import { Metrics } from '../core/metrics.js';
import { Multipart } from '../core/multipart.js';
import { sendStoredBytes } from '../core/transfer.js';
import { trashed } from '../trash/service.js';
import { UploadAdmission } from './admission.js';
import { FilesService } from './service.js';

/** File upload, read, download, media paths and delete. */
@injectable()
export class FilesRoutes implements Feature {
  constructor(
    @inject(UploadAdmission) private readonly admission: UploadAdmission,
    @inject(Multipart) private readonly multipart: Multipart,
    @inject(FilesService) private readonly files: FilesService,
    @inject(Metrics) private readonly metrics: Metrics,
  ) {}

  /** tinyhttp runs the first route of a path for HEAD, whatever its method: GET routes come first. */
  register(routes: Routes): void {
    routes.on(ROUTES.fileVersions, async ({ principal, params }) => this.files.versions(principal, params.id));

    routes.on(ROUTES.getFile, async ({ principal, params }) => this.files.get(principal, params.id));

    routes.on(ROUTES.filePeaks, async ({ principal, params }) => this.files.peaks(principal, params.id));

    // Also by the access_token cookie (declared), so an <audio> element can play and seek.
    routes.on(ROUTES.filePreview, async ({ req, res, principal, params }) => {
      await sendStoredBytes(req, res, await this.files.preview(principal, params.id), 'inline');
    });

    routes.on(ROUTES.stemEntries, async ({ principal, params, query }) => this.files.stemEntries(principal, params.id, query));

    routes.on(ROUTES.stemEntryPreview, async ({ req, res, principal, params }) => {
      await sendStoredBytes(req, res, await this.files.entryPreview(principal, params.id, params.index), 'inline');
    });

    // Downloads and media paths also take the access_token cookie (declared), so an <audio> element can play and seek.
    routes.on(ROUTES.downloadFile, async ({ req, res, principal, params }) => {
      await sendStoredBytes(req, res, await this.files.bytes(principal, params.id), 'attachment');
    });

    routes.on(ROUTES.mediaFile, async ({ req, res, principal, params }) => {
      await sendStoredBytes(req, res, await this.files.bytesByStoredName(principal, params.name), 'inline');
    });

    routes.on(ROUTES.uploadFile, async (context) => {
      const protocol = 'multipart';
      const ended = this.metrics.uploadDuration.startTimer({ protocol });
      this.metrics.uploadsStarted.inc({ protocol });
      try {
        const answer = await this.uploadFile(context);
        this.metrics.uploadsCompleted.inc({ protocol });
        this.metrics.uploadBytes.inc({ protocol }, answer.body.size);
        ended();
        return answer;
      } catch (error) {
        this.metrics.uploadsFailed.inc({ protocol });
        throw error;
      }
    });

    routes.on(ROUTES.deleteFile, async ({ principal, params, query }) => {
      if (query.series === 'all') return this.files.deleteSeries(principal, params.id);
      const trashedUntil = await this.files.delete(principal, params.id);
      return { id: params.id, deleted: true as const, ...trashed(trashedUntil) };
    });
  }

  /** A multipart upload: its admission (files/admission.ts) decides, part by part, whether it may go on. */
  private async uploadFile({ req, res, principal, query }: RouteContext<typeof ROUTES.uploadFile>) {
    const ifNoneMatch = typeof req.headers['if-none-match'] === 'string' ? req.headers['if-none-match'] : null;
    const { versionOf: queryVersionOf } = query;
    const admission = await this.admission.form(principal, { versionOf: queryVersionOf, ifNoneMatch });
    const upload = await this.multipart.receive(req, res, { fileField: 'file', storedAs: 'file', admission });
    const fields = await this.multipart.validFields({ ...upload, fields: { ...(queryVersionOf ? { versionOf: queryVersionOf } : {}), ...upload.fields } }, uploadFields);
    if (!upload.file) throw invalidField('file', 'is required');
    const versionOf = fields.versionOf ?? queryVersionOf;
    const file = await this.files.upload(principal, {
      cutId: fields.cutId ?? null,
      series: versionOf ? { fileId: versionOf } : null,
      name: fields.name ?? null,
      path: fields.path ?? null,
      originalName: upload.file.originalName,
      file: upload.file,
    });
    return { location: pathOf(ROUTES.getFile, { id: file.id }), body: file };
  }

  async start(): Promise<void> {
    await this.files.prepareStorage();
  }
}
