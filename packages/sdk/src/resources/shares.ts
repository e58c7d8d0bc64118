import { download, type DownloadOptions, type DownloadResult } from '../download.js';
import { type RequestOptions, segment, type Transport } from '../transport.js';
import type { Comment, CommentPage, Deleted, GuestCommentRequest, SharedItem, ShareRecord } from '../types.js';

/** Which links to list: those of one file or of one cut. */
export type ShareListTarget = { fileId: string } | { cutId: string };

/**
 * Share links: opening one needs no account or token (`get`, `download`); listing and revoking them is for
 * the project's members.
 */
export class SharesResource {
  constructor(private readonly transport: Transport) {}

  /** What a link shares: a file (`kind: "file"`) or a cut and its files (`kind: "cut"`). Takes the token or the whole share URL (whose server is then used). */
  get(tokenOrUrl: string, options?: RequestOptions): Promise<SharedItem> {
    const { transport, path } = this.locate(tokenOrUrl);
    return transport.json<SharedItem>({ method: 'GET', path, auth: false }, options);
  }

  /** A feedback link's comments (a link made with allowComments), without an account: the first page, every status. */
  comments(tokenOrUrl: string, options?: RequestOptions): Promise<CommentPage> {
    const { transport, path } = this.locate(tokenOrUrl);
    return transport.json<CommentPage>({ method: 'GET', path: `${path}/comments`, auth: false }, options);
  }

  /** Comments through a feedback link as a guest named `name`; 429 RATE_LIMITED past 20 per 10 minutes from one address. */
  comment(tokenOrUrl: string, input: GuestCommentRequest, options?: RequestOptions): Promise<Comment> {
    const { transport, path } = this.locate(tokenOrUrl);
    return transport.json<Comment>({ method: 'POST', path: `${path}/comments`, auth: false, json: input }, options);
  }

  /** The live links of a file or a cut, with who made them and how often they were used; never their tokens. */
  list(target: ShareListTarget, options?: RequestOptions): Promise<ShareRecord[]> {
    const path = 'fileId' in target ? `/api/files/${segment(target.fileId)}/shares` : `/api/cuts/${segment(target.cutId)}/shares`;
    return this.transport.json<ShareRecord[]>({ method: 'GET', path }, options);
  }

  /** Revokes one link by its id (from `list`): its creator, the file's uploader or a project ADMIN. */
  revoke(id: string, options?: RequestOptions): Promise<Deleted> {
    return this.transport.json<Deleted>({ method: 'DELETE', path: `/api/shares/${segment(id)}` }, options);
  }

  /** Saves what a link shares: a file's bytes, or a cut's files as one ZIP. */
  download(tokenOrUrl: string, target: Omit<DownloadOptions, 'range'>, options?: RequestOptions): Promise<DownloadResult> {
    const { transport, path } = this.locate(tokenOrUrl);
    return download(transport, { path: `${path}?download=1`, auth: false }, target, options);
  }

  /** `https://host/base/share/<token>` is served by `https://host/base`, which may not be this client's server. */
  private locate(tokenOrUrl: string): { transport: Transport; path: string } {
    const match = /^(https?:\/\/.+?)\/(?:api\/)?share\/([^/?#]+)/.exec(tokenOrUrl.trim());
    const token = match ? decodeURIComponent(match[2]!) : tokenOrUrl.trim();
    const path = `/api/share/${segment(token)}`;
    if (!match || match[1] === this.transport.baseUrl) return { transport: this.transport, path };
    return { transport: this.transport.forServer(match[1]!), path };
  }
}
