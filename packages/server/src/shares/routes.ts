import type { Request } from '@tinyhttp/app';
import { pathOf, ROUTES, type ShareLink } from '@bandcollab/sdk/contract';
import { createHash } from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { sendArchive } from '../archives/http.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Created, RouteContext, Routes } from '../core/routes.js';
import { sendHtml } from '../core/html-page.js';
import { clientAddress, sendJson } from '../core/http.js';
import { sendStoredBytes } from '../core/transfer.js';
import type { StoredFileRow } from '../files/repository.js';
import { FilesService } from '../files/service.js';
import { type CutSharePageView, renderCutSharePage, renderNotFoundPage, renderSharePage, SHARE_PAGE_CSP } from './page.js';
import type { ShareTarget } from './repository.js';
import { type AccessRequest, feedbackLinkOf, type ResolvedShare, SharesService } from './service.js';
import { CommentsService, type PageRequest } from '../comments/service.js';

/** The comments a feedback link's page lists: every thread, up to the most a page holds. */
const FEEDBACK_PAGE: PageRequest = { status: 'all', since: null, limit: 500, cursor: null };

/** Share links of files and cuts, their management, the public share endpoints and the /share/:token page. */
@injectable()
export class SharesRoutes implements Feature {
  constructor(
    @inject(SharesService) private readonly shares: SharesService,
    @inject(FilesService) private readonly files: FilesService,
    @inject(CommentsService) private readonly comments: CommentsService,
    @inject(CONFIG) private readonly config: Config,
  ) {}

  /** tinyhttp runs the first route of a path for HEAD, whatever its method: GET routes come first. */
  register(routes: Routes): void {
    // A file link: JSON, else the file's bytes. A cut link: JSON, else its ZIP.
    routes.on(ROUTES.shared, async ({ req, res, params: { token }, query }) => {
      const share = await this.shares.resolve(token);
      res.setHeader('Vary', 'Accept');
      if (acceptsJson(req)) {
        sendJson(res, 200, share.kind === 'file' ? this.shares.describeFile(token, share) : this.shares.describeCut(token, share));
        return;
      }
      await this.shares.recordAccess(share, accessOf(req), { download: true });
      if (share.kind === 'cut') {
        await sendArchive(req, res, this.shares.archiveOf(share));
        return;
      }
      await sendStoredBytes(req, res, this.files.bytesOf(share.file), query.download === '1' ? 'attachment' : 'inline');
    });

    routes.on(ROUTES.sharedCutFile, async ({ req, res, params, query }) => {
      const share = await this.shares.resolve(params.token);
      const file = this.shares.fileOf(share, params.fileId);
      await this.shares.recordAccess(share, accessOf(req), { download: true });
      await sendStoredBytes(req, res, this.files.bytesOf(file), query.download === '1' ? 'attachment' : 'inline');
    });

    // A file link's waveform (not an access: the page that draws it counted).
    routes.on(ROUTES.sharedPeaks, async ({ params }) => {
      const share = await this.shares.resolve(params.token);
      if (share.kind !== 'file') throw notFound('Share link');
      return this.files.peaksOf(share.file.id);
    });

    // A file link's preview, also on a stream-only link: a play when fetched from its start (not an access).
    routes.on(ROUTES.sharedPreview, async ({ req, res, params, query }) => {
      const share = await this.shares.resolve(params.token);
      if (share.kind !== 'file') throw notFound('Share link');
      // A link that follows its series serves each version's preview too (`?version=`), for its page's A/B.
      const version = query.version === undefined ? null : Number(query.version);
      if (version !== null && !Number.isInteger(version)) throw invalidField('version', 'must be a version number');
      const bytes = this.files.previewOf(version === null ? share.file : await this.shares.versionOf(share, version));
      await this.shares.recordPlay(share, accessOf(req), this.listener(req));
      await sendStoredBytes(req, res, bytes, 'inline');
    });

    routes.on(ROUTES.sharedCutFilePreview, async ({ req, res, params }) => {
      const share = await this.shares.resolve(params.token);
      const bytes = this.files.previewOf(this.shares.fileOf(share, params.fileId));
      await this.shares.recordPlay(share, accessOf(req), this.listener(req));
      await sendStoredBytes(req, res, bytes, 'inline');
    });

    // The waveform of a file of a cut link (not an access either).
    routes.on(ROUTES.sharedCutFilePeaks, async ({ params }) => {
      const share = await this.shares.resolve(params.token);
      return this.files.peaksOf(this.shares.fileOf(share, params.fileId).id);
    });

    routes.on(ROUTES.sharedArchive, async ({ req, res, params }) => {
      const share = await this.shares.resolve(params.token);
      if (share.kind !== 'cut') throw notFound('Share link');
      await this.shares.recordAccess(share, accessOf(req), { download: true });
      await sendArchive(req, res, this.shares.archiveOf(share));
    });

    routes.on(ROUTES.sharePage, async ({ req, res, params: { token } }) => {
      let share: ResolvedShare;
      try {
        share = await this.shares.resolve(token);
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'NOT_FOUND')) throw error;
        sendHtml(req, res, 404, renderNotFoundPage(), SHARE_PAGE_CSP);
        return;
      }
      await this.shares.recordAccess(share, accessOf(req));
      const base = `/api/share/${token}`;
      const html =
        share.kind === 'file'
          ? renderSharePage({
              name: share.file.name,
              type: share.file.type,
              mimeType: share.file.mimeType,
              size: share.file.size,
              expiresAt: share.expiresAt,
              bytesPath: base,
              downloadPath: share.download ? `${base}?download=1` : null,
              previewPath: share.file.preview === 'done' ? `${base}/preview` : null,
              audio: share.file.audio,
              peaks: share.file.audio ? ((await this.files.waveforms([share.file.id])).get(share.file.id) ?? null) : null,
              version:
                share.follow === 'latest' || share.seriesFileIds.length > 1 ? { number: share.version, latest: share.file.id === share.seriesFileIds.at(-1) } : null,
              id: share.file.id,
              compare: (await this.shares.versionsOf(share)).map((file) => ({
                id: file.id,
                seriesId: file.seriesId,
                version: file.version,
                name: file.name,
                type: file.type,
                mimeType: file.mimeType,
                size: file.size,
                bytesPath: base,
                downloadPath: null,
                previewPath: file.preview === 'done' ? `${base}/preview?version=${file.version}` : null,
                audio: file.audio,
                peaks: null,
              })),
              feedback: share.allowComments
                ? { comments: (await this.comments.listOfFeedbackLink(feedbackLinkOf(share), FEEDBACK_PAGE)).comments, commentsPath: `${base}/comments`, closed: share.commentsClosed }
                : null,
            })
          : renderCutSharePage({
              name: share.name,
              expiresAt: share.expiresAt,
              archivePath: share.download ? `${base}/archive` : null,
              files: await this.cutPageFiles(share.files, base, share.download),
            });
      sendHtml(req, res, 200, html, SHARE_PAGE_CSP);
    });

    routes.on(ROUTES.listFileShares, async ({ principal, params }) => this.shares.list(principal, { fileId: params.id }));

    routes.on(ROUTES.listCutShares, async ({ principal, params }) => this.shares.list(principal, { cutId: params.id }));

    routes.on(ROUTES.shareFile, async (context) => this.createLink(context, { fileId: context.params.id }));

    routes.on(ROUTES.shareCut, async (context) => this.createLink(context, { cutId: context.params.id }));

    routes.on(ROUTES.unshareFile, async ({ principal, params }) => this.shares.revokeAllOfFile(principal, params.id));

    routes.on(ROUTES.unshareCut, async ({ principal, params }) => this.shares.revokeAllOfCut(principal, params.id));

    routes.on(ROUTES.closeFeedbackLink, async ({ principal, params }) => this.shares.setCommentsClosed(principal, params.id, true));

    routes.on(ROUTES.reopenFeedbackLink, async ({ principal, params }) => this.shares.setCommentsClosed(principal, params.id, false));

    routes.on(ROUTES.deleteShare, async ({ principal, params }) => {
      await this.shares.revoke(principal, params.id);
      return { id: params.id, deleted: true };
    });
  }

  private async createLink(
    { principal, body }: RouteContext<typeof ROUTES.shareFile | typeof ROUTES.shareCut>,
    target: ShareTarget,
  ): Promise<Created<ShareLink>> {
    // Access before the body, as in ProjectsRoutes: a stranger gets 404 whatever it sends.
    await this.shares.requireMember(principal, target);
    const { expiresIn, follow, allowComments, reuse, download } = await body();
    const link = await this.shares.create(principal, target, expiresIn ?? null, {
      follow: follow ?? 'this',
      allowComments: allowComments ?? false,
      download: download ?? true,
      reuse: reuse ?? false,
    });
    return { location: pathOf(ROUTES.shared, { token: link.token }), body: link };
  }

  /**
   * Who fetches a preview, as plays tell clients apart: a digest of the address (the proxy's forwarded one when
   * trusted) and the User-Agent, so the table keeps neither.
   */
  private listener(req: Request): string {
    const agent = typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : '';
    return createHash('sha256').update(`${clientAddress(req, this.config.trustProxy)}\n${agent}`).digest('base64url').slice(0, 22);
  }

  /** The cut's files as its page shows them: analysed audio with its waveform. */
  private async cutPageFiles(files: StoredFileRow[], base: string, download: boolean): Promise<CutSharePageView['files']> {
    const waveforms = await this.files.waveforms(files.filter((file) => file.audio).map((file) => file.id));
    // By name, as a folder lists them (natural order: "Take 2" before "Take 10").
    const byName = [...files].sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true, sensitivity: 'base' }));
    return byName.map((file) => ({
      id: file.id,
      seriesId: file.seriesId,
      version: file.version,
      name: file.name,
      type: file.type,
      mimeType: file.mimeType,
      size: file.size,
      bytesPath: `${base}/files/${file.id}`,
      downloadPath: download ? `${base}/files/${file.id}?download=1` : null,
      previewPath: file.preview === 'done' ? `${base}/files/${file.id}/preview` : null,
      audio: file.audio,
      peaks: waveforms.get(file.id) ?? null,
    }));
  }
}

/** The parts of a request the counting rule reads. */
function accessOf(req: Request): AccessRequest {
  const dest = req.headers['sec-fetch-dest'];
  return { method: req.method ?? 'GET', range: req.headers.range, fetchDest: typeof dest === 'string' ? dest : undefined };
}

/** Whether the Accept header names application/json (with a non-zero quality). */
function acceptsJson(req: Request): boolean {
  return (req.headers.accept ?? '').split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    return type === 'application/json' && !params.some((param) => /^q=0(\.0*)?$/.test(param));
  });
}
