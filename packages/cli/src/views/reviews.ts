// How band shows reviews and a version's readiness to people (review).
import type { Review, ReviewList, ReviewRequestsResult } from '@bandcollab/sdk';
import { counted, formatTime, type Output } from '../render.js';

export function reviewedView(review: Review, file: string): string {
  return `${review.state === 'approved' ? 'Approved' : 'Requested changes to'} ${file}${review.note ? `: ${review.note}` : ''}`;
}

export function reviewRequestedView(result: ReviewRequestsResult, file: string, asked: readonly string[]): string {
  const names = result.reviewRequests.filter((request) => asked.includes(request.userId)).map((request) => request.name);
  const mailed = result.emailed ? 'emailed' : 'not emailed (the server sends no email, or they turned review requests off)';
  return `Asked ${names.join(', ')} to review ${file}: ${mailed}`;
}

export function withdrawnReviewView(file: string): string {
  return `Withdrew your review of ${file}`;
}

/** `band review status`: who reviewed the version how, and the summary. */
export function reviewStatusView(out: Output, file: string, list: ReviewList): string {
  const { approved, changesRequested, openComments } = list.summary;
  return [
    out.table(
      list.reviews,
      [
        { header: 'MEMBER', value: (r) => (r.token === null ? r.name : `${r.name} (token ${r.token})`) },
        { header: 'REVIEW', value: (r) => (r.state === 'approved' ? 'approved' : 'changes requested') },
        { header: 'AT', value: (r) => formatTime(r.at) },
        { header: 'NOTE', value: (r) => (r.note ?? '').replace(/\n/g, ' ') },
      ],
      'No reviews yet',
    ),
    `${file}: ${approved} approved, ${changesRequested} changes requested, ${counted(openComments, 'open comment')}`,
  ].join('\n');
}

/** What keeps a version from release under `band review status`'s requirements. */
export interface ReleaseShortfall {
  approvals?: { have: number; need: number };
  changesRequestedBy?: readonly string[];
  openComments?: number;
}

/** "mix.wav is not ready: 1 of 2 approvals; changes requested by Ben; 3 open comments" */
export function notReadyView(file: string, shortfall: ReleaseShortfall): string {
  const reasons: string[] = [];
  if (shortfall.approvals) reasons.push(`${shortfall.approvals.have} of ${counted(shortfall.approvals.need, 'approval')}`);
  if (shortfall.changesRequestedBy) reasons.push(`changes requested by ${shortfall.changesRequestedBy.join(', ')}`);
  if (shortfall.openComments) reasons.push(counted(shortfall.openComments, 'open comment'));
  return `${file} is not ready: ${reasons.join('; ')}`;
}

export function readyView(file: string, approved: number): string {
  return `${file} is ready: ${counted(approved, 'approval')}`;
}
