import type { BandPromise } from '../band-promise.js';
import { download, type DownloadOptions, type DownloadResult } from '../download.js';
import { ROUTES } from '../contract/routes.js';
import { type RequestOptions, routeRequest, type Transport } from '../transport.js';
import type { Comment, CommentPage, Deleted, FeedbackLinkState, GuestCommentRequest, SharedItem, ShareRecord, Waveform } from '../types.js';

/** Which links to list: those of one file or of one cut. */
export type ShareListTarget = { fileId: string } | { cutId: string };

/**
 * Share links: opening one needs no account or token (`get`, `download`); listing and revoking them is for
 * the project's members.
 */
export class SharesResource {
  constructor(private readonly transport: Transport) {}

  /** What a link shares: a file (`kind: "file"`) or a cut and its files (`kind: "cut"`). Takes the token or the whole share URL (whose server is then used). */
  get(tokenOrUrl: string, options?: RequestOptions): BandPromise<SharedItem> {
    const { transport, token } = this.locate(tokenOrUrl);
    return transport.json<SharedItem>(routeRequest(ROUTES.shared, { params: { token } }), options);
  }

  /** A feedback link's comments (a link made with allowComments), without an account: the first page, every status. */
  comments(tokenOrUrl: string, options?: RequestOptions): BandPromise<CommentPage> {
    const { transport, token } = this.locate(tokenOrUrl);
    return transport.call(ROUTES.sharedComments, { params: { token } }, options);
  }

  /** Comments through a feedback link as a guest named `name`; 429 RATE_LIMITED past 20 per 10 minutes from one address. */
  comment(tokenOrUrl: string, input: GuestCommentRequest, options?: RequestOptions): BandPromise<Comment> {
    const { transport, token } = this.locate(tokenOrUrl);
    return transport.call(ROUTES.createSharedComment, { params: { token }, json: input }, options);
  }

  /** The live links of a file or a cut, with who made them and how often they were used; never their tokens. */
  list(target: ShareListTarget, options?: RequestOptions): BandPromise<ShareRecord[]> {
    return 'fileId' in target
      ? this.transport.call(ROUTES.listFileShares, { params: { id: target.fileId } }, options)
      : this.transport.call(ROUTES.listCutShares, { params: { id: target.cutId } }, options);
  }

  /** Closes a feedback link (by its id, from `list`) to new comments without revoking it: its creator or a project ADMIN. */
  closeComments(id: string, options?: RequestOptions): BandPromise<FeedbackLinkState> {
    return this.transport.call(ROUTES.closeFeedbackLink, { params: { id } }, options);
  }

  /** Reopens a feedback link to comments: its creator or a project ADMIN. */
  reopenComments(id: string, options?: RequestOptions): BandPromise<FeedbackLinkState> {
    return this.transport.call(ROUTES.reopenFeedbackLink, { params: { id } }, options);
  }

  /** Revokes one link by its id (from `list`): its creator, the file's uploader or a project ADMIN. */
  revoke(id: string, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.deleteShare, { params: { id } }, options);
  }

  /** Saves what a link shares: a file's bytes, or a cut's files as one ZIP. */
  download(tokenOrUrl: string, target: Omit<DownloadOptions, 'range'>, options?: RequestOptions): Promise<DownloadResult> {
    const { transport, token } = this.locate(tokenOrUrl);
    return download(transport, routeRequest(ROUTES.shared, { params: { token }, query: { download: '1' } }), target, options);
  }

  /**
   * Saves the listening preview of a shared CUT (also on a stream-only link): a file link's, or with `fileId`
   * that of a file of a cut link. 409 PREVIEW_NOT_READY until made.
   */
  downloadPreview(tokenOrUrl: string, target: DownloadOptions, fileId?: string, options?: RequestOptions): Promise<DownloadResult> {
    const { transport, token } = this.locate(tokenOrUrl);
    const request = fileId === undefined ? routeRequest(ROUTES.sharedPreview, { params: { token } }) : routeRequest(ROUTES.sharedCutFilePreview, { params: { token, fileId } });
    return download(transport, request, target, options);
  }

  /** Saves a cut link's files as one ZIP. */
  downloadArchive(tokenOrUrl: string, target: Omit<DownloadOptions, 'range'>, options?: RequestOptions): Promise<DownloadResult> {
    const { transport, token } = this.locate(tokenOrUrl);
    return download(transport, routeRequest(ROUTES.sharedArchive, { params: { token } }), target, options);
  }

  /** Saves one file of a cut link (its id from `get`); resumes with a Range request if the connection breaks. */
  downloadFile(tokenOrUrl: string, fileId: string, target: DownloadOptions, options?: RequestOptions): Promise<DownloadResult> {
    const { transport, token } = this.locate(tokenOrUrl);
    return download(transport, routeRequest(ROUTES.sharedCutFile, { params: { token, fileId }, query: { download: '1' } }), target, options);
  }

  /**
   * The waveform of a shared CUT: a file link's, or with `fileId` that of a file of a cut link. 409
   * ANALYSIS_PENDING until analysed, 404 when it has none.
   */
  peaks(tokenOrUrl: string, fileId?: string, options?: RequestOptions): BandPromise<Waveform> {
    const { transport, token } = this.locate(tokenOrUrl);
    return fileId === undefined
      ? transport.call(ROUTES.sharedPeaks, { params: { token } }, options)
      : transport.call(ROUTES.sharedCutFilePeaks, { params: { token, fileId } }, options);
  }

  /** `https://host/base/share/<token>` is served by `https://host/base`, which may not be this client's server. */
  private locate(tokenOrUrl: string): { transport: Transport; token: string } {
    const match = /^(https?:\/\/.+?)\/(?:api\/)?share\/([^/?#]+)/.exec(tokenOrUrl.trim());
    const token = match ? decodeURIComponent(match[2]!) : tokenOrUrl.trim();
    if (!match || match[1] === this.transport.baseUrl) return { transport: this.transport, token };
    return { transport: this.transport.forServer(match[1]!), token };
  }
}
