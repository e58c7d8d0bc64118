import type { BandPromise } from '../band-promise.js';
import { download, type DownloadOptions, type DownloadResult } from '../download.js';
import { pathOf } from '../contract/route-types.js';
import { ROUTES } from '../contract/routes.js';
import { type RequestOptions, type Transport } from '../transport.js';
import type { CreateCutRequest, Cut, CutWithFiles, Deleted, RevokeSharesResult, ShareLink, ShareRequest, UpdateCutRequest } from '../types.js';

export class CutsResource {
  constructor(private readonly transport: Transport) {}

  create(vibeId: string, input: CreateCutRequest, options?: RequestOptions): BandPromise<Cut> {
    return this.transport.call(ROUTES.createCut, { params: { vibeId }, json: input }, options);
  }

  /**
   * The cut with its files, every version of each series, oldest first; with `latest: true` only the latest
   * version of each series, each with its `path` (§16): what a session folder mirrors.
   */
  get(id: string, { latest = false }: { latest?: boolean } = {}, options?: RequestOptions): BandPromise<CutWithFiles> {
    return this.transport.call(ROUTES.getCut, { params: { id }, ...(latest ? { query: { latest: 'true' } } : {}) }, options);
  }

  update(id: string, input: UpdateCutRequest, options?: RequestOptions): BandPromise<Cut> {
    return this.transport.call(ROUTES.updateCut, { params: { id }, json: input }, options);
  }

  /** Deletes the cut and its files. */
  delete(id: string, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.deleteCut, { params: { id } }, options);
  }

  /** Moves the cut to another vibe of the same project. */
  move(id: string, targetVibeId: string, options?: RequestOptions): BandPromise<Cut> {
    return this.transport.call(ROUTES.moveCut, { params: { id }, json: { targetVibeId } }, options);
  }

  /**
   * Saves every file of the cut as one ZIP (stored, named `<display name>.<ext>`) to a path or a stream.
   * The server writes the ZIP as it sends it: a broken connection fails the download instead of resuming it.
   */
  archive(id: string, target: Omit<DownloadOptions, 'range'>, options?: RequestOptions): Promise<DownloadResult> {
    return download(this.transport, { path: pathOf(ROUTES.cutArchive, { id }) }, target, options);
  }

  /** Makes a new public link to the cut's files; `expiresIn` in seconds (60 to 31,536,000), none for a link that does not expire. */
  share(id: string, request: ShareRequest = {}, options?: RequestOptions): BandPromise<ShareLink> {
    return this.transport.call(ROUTES.shareCut, { params: { id }, json: request }, options);
  }

  /** Revokes every public link of the cut (a project ADMIN, or a member when every link is their own). */
  unshare(id: string, options?: RequestOptions): BandPromise<RevokeSharesResult> {
    return this.transport.call(ROUTES.unshareCut, { params: { id } }, options);
  }
}
