// How band shows share links to people (share, file share, cut share).
import type { FeedbackLinkState, RevokeSharesResult, ShareLink, ShareRecord } from '@bandcollab/sdk';
import { counted, formatTime, type Output } from '../render.js';

/** A new link: its URL alone on stdout (`url=$(band file share …)`), when it expires on stderr; the record with --json. */
export function showShareLink(out: Output, link: ShareLink): void {
  out.record(link, () => link.shareUrl);
  if (!out.json && link.expiresAt) out.info(`expires ${formatTime(link.expiresAt)} UTC`);
}

export function unsharedView(result: RevokeSharesResult, file: string): string {
  return `Revoked ${counted(result.revoked, 'link')} to ${file}`;
}

export function shareTable(out: Output, links: readonly ShareRecord[]): string {
  return out.table(links, [
    { header: 'ID', value: (l) => l.id },
    { header: 'CREATED BY', value: (l) => l.createdBy.name },
    { header: 'CREATED', value: (l) => formatTime(l.createdAt) },
    { header: 'EXPIRES', value: (l) => (l.expiresAt ? formatTime(l.expiresAt) : 'never') },
    { header: 'DOWNLOAD', value: (l) => (l.download ? 'yes' : 'stream only') },
    { header: 'PLAYS', value: (l) => String(l.plays) },
    { header: 'DOWNLOADS', value: (l) => String(l.downloads) },
    { header: 'ACCESSES', value: (l) => String(l.accessCount) },
    { header: 'LAST ACCESS', value: (l) => (l.lastAccessedAt ? formatTime(l.lastAccessedAt) : '-') },
  ], 'No live links');
}

export function revokedLinkView(id: string): string {
  return `Revoked link ${id}`;
}

export function feedbackLinkStateView(state: FeedbackLinkState): string {
  return state.commentsClosed ? `Link ${state.id} is closed to new comments (it still plays and shows its comments)` : `Link ${state.id} takes comments again`;
}
