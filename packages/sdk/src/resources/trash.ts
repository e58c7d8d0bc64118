import type { BandPromise } from '../band-promise.js';
import { ROUTES } from '../contract/routes.js';
import type { RequestOptions, Transport } from '../transport.js';
import type { PurgedTrash, RestoredTrash, TrashItem, TrashKind } from '../types.js';

/**
 * The trash (§21): deletes keep what they remove for the server's retention, invisible everywhere else, until
 * it is restored (ids, versions, comments and bytes as they were) or purged for good.
 */
export class TrashResource {
  constructor(private readonly transport: Transport) {}

  /** A project's trash (`projectId`), or your own (null: your trashed projects and what you deleted), newest first. */
  list(projectId: string | null, options?: RequestOptions): BandPromise<TrashItem[]> {
    return projectId === null
      ? this.transport.call(ROUTES.listTrash, {}, options)
      : this.transport.call(ROUTES.listProjectTrash, { params: { id: projectId } }, options);
  }

  /** Puts it back, with its parent when that is in the trash too. */
  restore(kind: TrashKind, id: string, options?: RequestOptions): BandPromise<RestoredTrash> {
    return this.transport.call(ROUTES.restoreTrash, { params: { kind, id } }, options);
  }

  /** Deletes it for good (a job on the server: the answer comes before the bytes are gone). */
  purge(kind: TrashKind, id: string, options?: RequestOptions): BandPromise<PurgedTrash> {
    return this.transport.call(ROUTES.purgeTrash, { params: { kind, id } }, options);
  }

  /** Deletes everything in a project's trash for good (ADMIN). */
  empty(projectId: string, options?: RequestOptions): BandPromise<PurgedTrash> {
    return this.transport.call(ROUTES.emptyProjectTrash, { params: { id: projectId } }, options);
  }
}
