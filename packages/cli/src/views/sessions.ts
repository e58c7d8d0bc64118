// How band shows what push and pull of a session folder plan and did (session).
import { counted, formatBytes, type Output } from '../render.js';
import type { PullAction, PushAction } from '../session/plan.js';
import type { SessionReport } from '../session/report.js';

/** What `band pull --previews` did: previews saved, those already there, those not made yet or failed. */
export function previewsPulledView(result: { fetched: string[]; skipped: string[]; failed: { name: string; reason: string }[]; notReady: string[] }): string {
  const lines = [
    ...result.failed.map(({ name, reason }) => `${name}: ${reason}`),
    ...result.notReady.map((name) => `${name}: no preview yet (pending or failed): not fetched`),
    `Fetched ${counted(result.fetched.length, 'preview')}; ${result.skipped.length} already there (same size); ${result.notReady.length} not ready; ${result.failed.length} failed`,
  ];
  return lines.join('\n');
}

type SessionAction = PushAction | PullAction;

/** The plan of a push or pull: what happens to each path and why; unchanged files only with `all` (a dry run). */
export function sessionPlanView(out: Output, actions: readonly SessionAction[], all: boolean): string {
  const shown = all ? actions : actions.filter((action) => action.action !== 'skip' || action.attention || action.deletionKept);
  return out.table(shown, [
    { header: 'ACTION', value: (action) => action.action },
    { header: 'PATH', value: (action) => action.path },
    { header: 'WHY', value: (action) => action.reason },
  ], 'Nothing to do');
}

/**
 * "Pushed 3 files (1.2 MiB); deleted 1; 1 in conflict; …; 3 files read to hash"; "Nothing pushed; 2 deletions left
 * alone (see above); …" when only deletions without --delete are there; "Up to date: nothing to push; …" when
 * every file was left alone.
 */
export function sessionSummaryView(verb: 'Pushed' | 'Pulled', report: SessionReport): string {
  const failed = new Set(report.failures.map((failure) => failure.path));
  const count = (kind: string) => report.actions.filter((action) => action.action === kind && !failed.has(action.path)).length;
  const moved = verb === 'Pushed' ? count('upload') : count('download');
  const attention = report.actions.filter((action) => action.action === 'skip' && action.attention).length;
  const kept = report.actions.filter((action) => action.deletionKept).length;
  const unchanged = `${count('skip') - attention - kept} unchanged or left alone`;
  const keptDeletions = kept > 0 ? [`${counted(kept, 'deletion')} left alone (see above)`] : [];
  const hashed = `${counted(report.hashed, 'file')} read to hash`;
  const nothing = report.actions.every((action) => action.action === 'skip' && !action.attention) && report.failures.length === 0;
  if (nothing && kept === 0) return `Up to date: nothing to ${verb === 'Pushed' ? 'push' : 'pull'}; ${unchanged}; ${hashed}`;
  if (nothing) return [`Nothing ${verb.toLowerCase()}`, ...keptDeletions, unchanged, hashed].join('; ');
  const parts = [
    `${verb} ${counted(moved, 'file')} (${formatBytes(report.bytes)})`,
    `${verb === 'Pushed' ? 'deleted' : 'moved to .band/trash/'} ${count('delete')}`,
    `${count('conflict')} in conflict`,
    ...(attention > 0 ? [`${attention} skipped (see above)`] : []),
    ...keptDeletions,
    unchanged,
    `${report.failures.length} failed`,
    hashed,
  ];
  return parts.join('; ');
}

export function symlinkSkippedView(relative: string): string {
  return `skipped ${relative}: a symbolic link (never followed)`;
}
