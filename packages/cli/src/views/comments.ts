// How band shows comments to people (comment).
import type { Comment, CommentCounts } from '@bandcollab/sdk';
import { counted, formatBytes, formatTime, type Output } from '../render.js';
import { shortId } from '../resolve.js';
import { clockTime } from '../times.js';
import type { NameOf } from './events.js';

/** Where a comment is pinned: "1:23.450", a range "1:23.450–1:31.000", or the whole mix. */
function pinnedAt(comment: Comment): string {
  if (comment.atMs === null) return 'whole mix';
  return comment.endMs === null ? clockTime(comment.atMs) : `${clockTime(comment.atMs)}–${clockTime(comment.endMs)}`;
}

/** A comment's text, each line indented under its heading; a deleted one keeps its place. */
function commentBody(comment: Comment, indent: string): string[] {
  if (comment.deleted || comment.body === null) return [`${indent}(deleted)`];
  const mentions = comment.mentions.length > 0 ? `  (to ${comment.mentions.map((m) => m.name).join(', ')})` : '';
  const lines = comment.body.split('\n');
  lines[lines.length - 1] += `${comment.edited ? ' (edited)' : ''}${mentions}`;
  return lines.map((line) => `${indent}${line}`);
}

function commentStatus(comment: Comment): string {
  return comment.resolved ? `resolved by ${comment.resolved.by.name}` : 'open';
}

/**
 * Comment threads, each top-level comment with its time, author, status and version, its replies under it;
 * `fileName` names the file of each (for a cut's or a project's inbox). `counts` close the list.
 */
export function commentThreads(out: Output, comments: readonly Comment[], counts: CommentCounts, fileName?: NameOf): string {
  const lines: string[] = [];
  for (const comment of comments) {
    const file = fileName ? `${fileName(comment.fileId) ?? 'a file'}  ` : '';
    lines.push(`${file}${out.bold(pinnedAt(comment))}  ${comment.author.name}${comment.author.guest ? ' (guest)' : ''}  ${commentStatus(comment)}  v${comment.version}  ${formatTime(comment.createdAt)}  ${out.dim(shortId(comment.id))}`);
    lines.push(...commentBody(comment, '    '));
    for (const reply of comment.replies ?? []) {
      lines.push(`    ↳ ${reply.author.name}${reply.author.guest ? ' (guest)' : ''}  ${formatTime(reply.createdAt)}  ${out.dim(shortId(reply.id))}`);
      lines.push(...commentBody(reply, '      '));
    }
  }
  if (comments.length === 0) lines.push('No comments');
  lines.push(`${counts.open} open, ${counts.resolved} resolved`);
  return lines.join('\n');
}

/** "Commented on mix.wav at 1:23.450 (id)" */
export function commentedView(comment: Comment, file: string): string {
  return `Commented on ${file} v${comment.version} at ${pinnedAt(comment)} (${shortId(comment.id)})`;
}

export function repliedView(reply: Comment, parent: Comment): string {
  return `Replied to ${parent.author.name}'s comment at ${pinnedAt(parent)} (${shortId(reply.id)})`;
}

export function commentChangedView(verb: 'Resolved' | 'Reopened' | 'Edited', comment: Comment): string {
  return `${verb} ${comment.author.name}'s comment at ${pinnedAt(comment)} (${shortId(comment.id)})`;
}

/** The question before deleting a comment: whose, where, and its first line. */
export function deleteCommentQuestion(comment: Comment): string {
  const firstLine = (comment.body ?? '').split('\n')[0]!;
  const shown = firstLine.length > 60 ? `${firstLine.slice(0, 59)}…` : firstLine;
  return `Delete ${comment.author.name}'s comment at ${pinnedAt(comment)} ("${shown}")?`;
}

/**
 * With the trash on (`trashedUntil`), a comment goes there with its replies, restorable; off, a top-level
 * comment with replies stays as a tombstone that keeps them.
 */
export function deletedCommentView(comment: Comment, answer: { trashedUntil?: string }): string {
  const replies = comment.replies?.length ?? 0;
  if (answer.trashedUntil !== undefined) {
    const withReplies = replies === 0 ? '' : ` and its ${replies === 1 ? 'reply' : `${replies} replies`}`;
    return `Moved the comment at ${pinnedAt(comment)}${withReplies} to the trash until ${formatTime(answer.trashedUntil)} UTC (band trash restore ${comment.id})`;
  }
  const kept = replies === 0 ? '' : `; its ${replies === 1 ? 'reply stays' : `${replies} replies stay`}`;
  return `Deleted the comment at ${pinnedAt(comment)} (${comment.id})${kept}`;
}

const MARKER_FORMAT_LABELS: Record<string, string> = {
  midi: 'MIDI markers',
  rpp: 'a REAPER project',
  wav: 'a WAV with cue points',
  audacity: 'Audacity labels',
  csv: 'CSV',
  json: 'JSON',
};

export function exportedMarkersView(file: string, format: string, target: string, size: number): string {
  return `Saved the comments of ${file} as ${MARKER_FORMAT_LABELS[format] ?? format} to ${target} (${formatBytes(size)})`;
}

/** What a marker export left out ("" when nothing): csv and json carry it. */
export function leftOutView(wholeMix: number, replies: number): string {
  const left = [wholeMix > 0 ? counted(wholeMix, 'whole-mix comment') : '', replies > 0 ? (replies === 1 ? '1 reply' : `${replies} replies`) : ''].filter(Boolean);
  return left.length === 0 ? '' : `Left out ${left.join(' and ')}: markers have a time and no thread (--format csv or json keeps them)`;
}
