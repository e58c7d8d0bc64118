// How band shows projects, vibes and cuts to people (project, vibe, cut, publish --create).
import type { Project, ProjectDetail, ReorderVibesResult } from '@bandcollab/sdk';
import { formatBytes, formatTime, type Output } from '../render.js';
import { TYPE_LABELS } from './files.js';

type Container = 'project' | 'vibe' | 'cut';

/** "Created cut Take 1 in Verse (id)"; `parent` is the vibe a cut was created in. */
export function createdView(kind: Container, record: { id: string; name: string }, parent?: string): string {
  return `Created ${kind} ${record.name}${parent === undefined ? '' : ` in ${parent}`} (${record.id})`;
}

/** What --create made on the way (publish). */
export function createdOnTheWayView(kind: Container, name: string): string {
  return `Created ${kind} ${name}`;
}

export function updatedProjectView(project: { name: string }): string {
  return `Updated project ${project.name}`;
}

export function renamedView(kind: 'vibe' | 'cut', from: string, to: string): string {
  return `Renamed ${kind} ${from} to ${to}`;
}

export function movedCutView(cut: string, vibe: string): string {
  return `Moved cut ${cut} to ${vibe}`;
}

/** A delete's answer: with `trashedUntil`, it went to the trash (§21), and says how to get it back. */
export function deletedView(kind: Container | 'file', name: string, answer: { id: string; trashedUntil?: string }): string {
  if (answer.trashedUntil === undefined) return `Deleted ${kind} ${name}`;
  return `Moved ${kind} ${name} to the trash until ${formatTime(answer.trashedUntil)} UTC (band trash restore ${answer.id})`;
}

export function vibeOrderView(result: ReorderVibesResult): string {
  return `New order: ${result.vibes.map((v) => v.name).join(', ')}`;
}

export function projectTable(out: Output, projects: readonly Project[]): string {
  return out.table(
    projects,
    [
      { header: 'NAME', value: (p) => p.name },
      { header: 'ROLE', value: (p) => p.role },
      { header: 'MEMBERS', value: (p) => String(p.memberCount) },
      { header: 'CREATED', value: (p) => formatTime(p.createdAt) },
      { header: 'ID', value: (p) => p.id },
    ],
    'No projects yet: band project create <name>',
  );
}

/** A project with its members, invitations and the tree of vibes, cuts and files. */
export function projectView(out: Output, detail: ProjectDetail): string {
  const lines = [`${out.bold(detail.name)}  ${out.dim(detail.id)}`];
  if (detail.description) lines.push(detail.description);
  lines.push(`Your role: ${detail.role}   created ${formatTime(detail.createdAt)}   updated ${formatTime(detail.updatedAt)}`);
  lines.push(`Review policy: ${reviewPolicyText(detail.reviewPolicy)}`, '', out.bold('Members'));
  for (const member of detail.members) lines.push(`  ${member.name} <${member.email}>  ${member.role}`);
  for (const invitation of detail.invitations) lines.push(`  ${invitation.email}  ${invitation.role}  (invited, expires ${formatTime(invitation.expiresAt)})`);
  lines.push('', out.bold('Vibes'));
  if (detail.vibes.length === 0) lines.push('  (none)');
  for (const vibe of detail.vibes) {
    lines.push(`  ${vibe.name}  ${out.dim(vibe.id)}`);
    for (const cut of vibe.cuts) {
      lines.push(`    ${cut.name}  ${out.dim(cut.id)}`);
      for (const file of cut.files) lines.push(`      ${file.name}  ${TYPE_LABELS[file.type]}  ${formatBytes(file.size)}  ${out.dim(file.id)}`);
    }
  }
  return lines.join('\n');
}

/** What a version needs to be ready for release, in words. */
export function reviewPolicyText(policy: { approvals: number; noOpenComments: boolean }): string {
  const approvals = `${policy.approvals} approval${policy.approvals === 1 ? '' : 's'}`;
  return `${approvals}, no request for changes${policy.noOpenComments ? ', no open comment' : ''}`;
}

export function savedArchiveView(cut: string, target: string, size: number): string {
  return `Saved cut ${cut} to ${target} (${formatBytes(size)})`;
}
