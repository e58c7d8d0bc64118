import type { Metrics } from '../metrics.js';
import type { BlobStore } from './blob-store.js';

/** The operations timed: a read's time is its opening (the first byte's wait), not the stream's. */
const MEASURED = ['write', 'read', 'openReader', 'head', 'downloadUrl', 'delete', 'move', 'startMultipart', 'writePart', 'completeMultipart', 'abortMultipart'] as const;

/**
 * Times every operation of `store` and counts its failures (`bandcollab_store_operation_*`), in place: the
 * store keeps its identity, so whatever holds it (the composition root, the drivers' close) is unchanged.
 */
export function measureStore<S extends BlobStore>(store: S, metrics: Metrics): S {
  for (const operation of MEASURED) {
    const call = (store[operation] as (...args: unknown[]) => Promise<unknown>).bind(store);
    const timed = async (...args: unknown[]) => {
      const end = metrics.storeDuration.startTimer({ operation });
      try {
        return await call(...args);
      } catch (error) {
        metrics.storeErrors.inc({ operation });
        throw error;
      } finally {
        end();
      }
    };
    Object.assign(store, { [operation]: timed });
  }
  return store;
}
