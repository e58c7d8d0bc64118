// The review policy's gate (§19): whether a version is ready for release under its project's policy, and the
// `review.gate_passed` event when one gets there. Every change that can move a version across the gate (a
// review, a top-level comment opened, resolved or deleted, the policy itself) settles the versions it touches
// in its own transaction; the stored `files.review_ready` makes the event fire once per passing.
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Queryable } from '../core/database.js';
import { EventPublisher, projectEvent } from '../events/publisher.js';
import { type FileFilter, findFileRows, reviewReady } from './repository.js';

@injectable()
export class ReviewGate {
  constructor(@inject(EventPublisher) private readonly events: EventPublisher) {}

  /**
   * Locks the versions of `filter` for the transaction: a change that settles them takes this before it
   * publishes anything (publishing enqueues jobs, which concurrent transactions may wait on), so that two
   * approvals committed at once wait for each other here, the second sees both and the gate cannot be missed.
   */
  async lock(tx: Queryable, filter: FileFilter): Promise<void> {
    await lockFiles(tx, filter);
  }

  /**
   * Records whether each version of `filter` (locked by `lock` earlier in the transaction) is ready now and
   * publishes `review.gate_passed` for those that just became so, `actor` being who made the change.
   */
  async settle(tx: Queryable, actor: Pick<Principal, 'userId' | 'name'>, filter: FileFilter): Promise<void> {
    await lockFiles(tx, filter);
    const turned = (await findFileRows(tx, filter)).filter((row) => reviewReady(row, row.reviewPolicy) !== row.reviewReady);
    if (turned.length === 0) return;
    await tx`update files set review_ready = not review_ready where id = any(${turned.map((row) => row.id)}::uuid[])`;
    for (const row of turned) {
      if (row.reviewReady) continue;
      const review = { approved: row.approved, changesRequested: row.changesRequested, openComments: row.openComments, ready: true };
      await this.events.publish(
        tx,
        projectEvent(actor, row.projectId, 'review.gate_passed', {
          fileId: row.id,
          seriesId: row.seriesId,
          cutId: row.cutId,
          name: row.name,
          version: row.version,
          review,
          policy: row.reviewPolicy,
        }),
      );
    }
  }
}

async function lockFiles(tx: Queryable, filter: FileFilter): Promise<void> {
  const which =
    'id' in filter
      ? tx`id = ${filter.id}`
      : 'seriesId' in filter
        ? tx`series_id = ${filter.seriesId}`
        : 'cutIds' in filter
          ? tx`cut_id = any(${filter.cutIds}::uuid[])`
          : tx`project_id = ${filter.projectId}`;
  await tx`select 1 from files where ${which} order by id for update`;
}
