import type { BandPromise } from '../band-promise.js';
import { ROUTES } from '../contract/routes.js';
import type { RequestOptions, Transport } from '../transport.js';
import type { Review, ReviewList, ReviewRequestsResult, ReviewState, WithdrawnReview } from '../types.js';

/** One review per member and file version: approve it or request changes; the latest counts (§14). */
export class ReviewsResource {
  constructor(private readonly transport: Transport) {}

  /** The version's reviews and their summary (approvals, changes requested, open comments of the series). */
  list(fileId: string, options?: RequestOptions): BandPromise<ReviewList> {
    return this.transport.call(ROUTES.listReviews, { params: { id: fileId } }, options);
  }

  /** Approves the version or requests changes, replacing your earlier review of it. */
  set(fileId: string, state: ReviewState, note?: string, options?: RequestOptions): BandPromise<Review> {
    return this.transport.call(ROUTES.putReview, { params: { id: fileId }, json: { state, ...(note === undefined ? {} : { note }) } }, options);
  }

  /**
   * Asks members of the project (user ids) to review the version: File.reviewRequests, the review.requested
   * event and, with email on, a mail to each (`emailed` says whether one was queued).
   */
  request(fileId: string, userIds: string[], options?: RequestOptions): BandPromise<ReviewRequestsResult> {
    return this.transport.call(ROUTES.requestReviews, { params: { id: fileId }, json: { userIds } }, options);
  }

  withdraw(fileId: string, options?: RequestOptions): BandPromise<WithdrawnReview> {
    return this.transport.call(ROUTES.withdrawReview, { params: { id: fileId } }, options);
  }
}
