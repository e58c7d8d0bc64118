import type { BandPromise } from '../band-promise.js';
import { pathOf } from '../contract/route-types.js';
import { ROUTES } from '../contract/routes.js';
import { download, type DownloadOptions, type DownloadResult } from '../download.js';
import { type PagedList, pagedList } from '../paging.js';
import { type RequestOptions, type Transport, withQuery } from '../transport.js';
import type { Comment, CommentPage, CreateCommentRequest, Deleted, MarkerFormat, UpdateCommentRequest } from '../types.js';

/** What a list of comments asks for; `since` for polling (strictly after it). */
export interface CommentListOptions {
  status?: 'open' | 'resolved' | 'all';
  since?: string | Date;
  /** Per page, 1–500 (default 200). */
  limit?: number;
}

export interface FileCommentListOptions extends CommentListOptions {
  /** `series` (default): every version of the file; `this`: this version only. */
  versions?: 'this' | 'series';
}

export interface InboxListOptions extends CommentListOptions {
  /** Only the comments that mention the caller. */
  mentionsMe?: boolean;
}

export interface MarkerExportOptions {
  format: MarkerFormat;
  /** Added to every time (where the mix starts in the DAW session). */
  offsetMs?: number;
  status?: 'open' | 'all';
  versions?: 'this' | 'series';
}

/** A whole list: every page, fetched as it is iterated; `pages()` gives the pages with their counts. */
export type CommentList = PagedList<Comment, CommentPage>;

/**
 * Comments pinned to moments of a file version (§14): any member comments, replies (`parentId`), resolves and
 * reopens; only its author edits one; its author or a project ADMIN deletes it. Lists are async iterables over
 * every page.
 */
export class CommentsResource {
  constructor(private readonly transport: Transport) {}

  /** The file's comments (top level, replies inside), ordered by moment; iterate to read every page. */
  list(fileId: string, options: FileCommentListOptions = {}, requestOptions?: RequestOptions): CommentList {
    return this.iterate((cursor) =>
      this.transport.call(ROUTES.listFileComments, { params: { id: fileId }, query: { ...pageQuery(options, cursor), versions: options.versions } }, requestOptions),
    );
  }

  /** The comments of every file of a cut: a band's inbox for one take. */
  listOfCut(cutId: string, options: InboxListOptions = {}, requestOptions?: RequestOptions): CommentList {
    return this.iterate((cursor) =>
      this.transport.call(ROUTES.listCutComments, { params: { id: cutId }, query: { ...pageQuery(options, cursor), mentions: options.mentionsMe ? 'me' : undefined } }, requestOptions),
    );
  }

  /** The comments of every file of a project. */
  listOfProject(projectId: string, options: InboxListOptions = {}, requestOptions?: RequestOptions): CommentList {
    return this.iterate((cursor) =>
      this.transport.call(
        ROUTES.listProjectComments,
        { params: { id: projectId }, query: { ...pageQuery(options, cursor), mentions: options.mentionsMe ? 'me' : undefined } },
        requestOptions,
      ),
    );
  }

  /** A comment at a moment (`atMs`), over a range (`atMs`–`endMs`), about the whole mix, or a reply (`parentId`). */
  create(fileId: string, input: CreateCommentRequest, options?: RequestOptions): BandPromise<Comment> {
    return this.transport.call(ROUTES.createComment, { params: { id: fileId }, json: input }, options);
  }

  get(id: string, options?: RequestOptions): BandPromise<Comment> {
    return this.transport.call(ROUTES.getComment, { params: { id } }, options);
  }

  /** Edits your comment (sets `edited`). */
  update(id: string, input: UpdateCommentRequest, options?: RequestOptions): BandPromise<Comment> {
    return this.transport.call(ROUTES.updateComment, { params: { id }, json: input }, options);
  }

  resolve(id: string, options?: RequestOptions): BandPromise<Comment> {
    return this.transport.call(ROUTES.resolveComment, { params: { id } }, options);
  }

  reopen(id: string, options?: RequestOptions): BandPromise<Comment> {
    return this.transport.call(ROUTES.reopenComment, { params: { id } }, options);
  }

  /** A top-level comment with replies stays as a tombstone (`deleted: true`). */
  delete(id: string, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.deleteComment, { params: { id } }, options);
  }

  /** Saves the comments as markers for a DAW or editor (`midi`, `rpp`, `wav`, `audacity`, `csv`, `json`) to a path or a stream. */
  export(fileId: string, markers: MarkerExportOptions, target: Omit<DownloadOptions, 'range'>, options?: RequestOptions): Promise<DownloadResult> {
    const path = withQuery(pathOf(ROUTES.exportComments, { id: fileId }), { ...markers });
    return download(this.transport, { path }, target, options);
  }

  private iterate(fetchPage: (cursor: string | undefined) => Promise<CommentPage>): CommentList {
    return pagedList(fetchPage, (page) => page.comments);
  }
}

function pageQuery(options: CommentListOptions, cursor: string | undefined) {
  const since = options.since instanceof Date ? options.since.toISOString() : options.since;
  return { status: options.status, since, limit: options.limit, cursor };
}
