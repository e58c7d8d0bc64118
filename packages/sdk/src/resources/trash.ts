import type { BandPromise } from '../band-promise.js';
import { ROUTES } from '../contract/routes.js';
import { routeMethods } from '../route-methods.js';
import type { RequestOptions } from '../transport.js';
import type { TrashItem } from '../types.js';

/**
 * The trash (§21): deletes keep what they remove for the server's retention, invisible everywhere else, until
 * it is restored (ids, versions, comments and bytes as they were) or purged for good.
 * From the declarations: `restore(kind, id)` puts it back, with its parent when that is in the trash too;
 * `purge(kind, id)` deletes it for good (a job on the server: the answer comes before the bytes are gone);
 * `empty(projectId)` deletes everything in a project's trash for good (ADMIN).
 */
export class TrashResource extends routeMethods('trash') {
  /** A project's trash (`projectId`), or your own (null: your trashed projects and what you deleted), newest first. */
  list(projectId: string | null, options?: RequestOptions): BandPromise<TrashItem[]> {
    return projectId === null
      ? this.transport.call(ROUTES.listTrash, {}, options)
      : this.transport.call(ROUTES.listProjectTrash, { params: { id: projectId } }, options);
  }
}
