// How band shows site administration to people (user, admin).
import type { AdminJobs, AdminUser, AdminUserActivation, RetriedJob } from '@bandcollab/sdk';
import { formatTime, type Output } from '../render.js';

export function adminUserTable(out: Output, users: readonly AdminUser[]): string {
  return out.table(users, [
    { header: 'EMAIL', value: (u) => u.email },
    { header: 'NAME', value: (u) => u.name },
    { header: 'ROLE', value: (u) => u.role },
    { header: 'STATUS', value: (u) => (u.active ? 'active' : 'deactivated') },
    { header: 'LAST SIGN-IN', value: (u) => formatTime(u.lastSignInAt) },
    { header: 'ID', value: (u) => u.id },
  ]);
}

/** The job counts by kind and state, how long the oldest due job waits, then the failed jobs with their errors. */
export function adminJobsView(out: Output, jobs: AdminJobs): string {
  const lines = [jobs.counts.length === 0 ? 'No jobs' : out.table(jobs.counts, [
    { header: 'KIND', value: (c) => c.kind },
    { header: 'STATE', value: (c) => c.state },
    { header: 'JOBS', value: (c) => String(c.count) },
  ])];
  lines.push('', jobs.oldestQueuedSeconds === null ? 'No job is waiting to start' : `The oldest job due has waited ${Math.round(jobs.oldestQueuedSeconds)} s`);
  if (jobs.failed.length > 0) {
    lines.push('', out.bold('Failed'), out.table(jobs.failed, [
      { header: 'ID', value: (j) => j.id },
      { header: 'KIND', value: (j) => j.kind },
      { header: 'ATTEMPTS', value: (j) => `${j.attempts}/${j.maxAttempts}` },
      { header: 'FAILED', value: (j) => formatTime(j.finishedAt) },
      { header: 'LAST ERROR', value: (j) => j.lastError ?? '' },
    ]));
  }
  return lines.join('\n');
}

export function retriedJobView(job: RetriedJob): string {
  return `Job ${job.id} is ${job.state} again`;
}

export function userActiveView(user: AdminUserActivation): string {
  const state = user.active
    ? `${user.email} is active: it can sign in again`
    : `${user.email} is deactivated: it cannot sign in, its sessions and tokens ended; its files stay`;
  if (user.shareLinks.length === 0) return state;
  const links = user.shareLinks.map((link) => `  ${link.kind} "${link.name}" (link ${link.id}${link.expiresAt ? `, expires ${formatTime(link.expiresAt)}` : ''})`);
  return [state, `${user.shareLinks.length} share link(s) ${user.active ? 'serving again' : 'suspended while it is deactivated'}:`, ...links].join('\n');
}
