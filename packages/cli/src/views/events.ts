// How band shows a project's live events to people (watch).
import type { ProjectEvent } from '@bandcollab/sdk';
import { counted, formatBytes, formatTime, type Output } from '../render.js';
import { clockTime } from '../times.js';
import { TYPE_LABELS } from './files.js';

export function watchingView(projectCount: number): string {
  return `watching ${counted(projectCount, 'project')} (Ctrl-C to stop)`;
}

export function disconnectedView(code: number, retryInMs: number): string {
  return `connection lost (${code}); reconnecting in ${(retryInMs / 1000).toFixed(1)} s; events in between are not replayed`;
}

/** The name of a project, member, vibe, cut or file by id, when known. */
export type NameOf = (id: string) => string | undefined;

export function eventLine(out: Output, event: ProjectEvent, nameOf: NameOf): string {
  const time = `${event.at.slice(0, 10)} ${event.at.slice(11, 19)} UTC`;
  const project = nameOf(event.projectId) ?? 'a project';
  const actor = event.actor.token === undefined ? event.actor.name : `${event.actor.name} (token "${event.actor.token}")`;
  return `${out.dim(time)}  ${out.bold(project)}  ${event.type}  ${actor} ${describeEvent(event, nameOf)}`;
}

/** What the actor did, in words; something whose name band never saw is "a vibe", "a file"… */
function describeEvent(event: ProjectEvent, nameOf: NameOf): string {
  const named = (kind: string, id: string) => {
    const name = nameOf(id);
    return name === undefined ? `a ${kind}` : `${kind} "${name}"`;
  };
  switch (event.type) {
    case 'project.updated':
      return `updated the project (now "${event.data.project.name}")`;
    case 'project.deleted':
      return 'deleted the project';
    case 'member.added':
      return `added ${event.data.member.name} as ${event.data.member.role}`;
    case 'member.removed':
      return event.data.userId === event.actor.id ? 'left the project' : `removed ${nameOf(event.data.userId) ?? 'a member'}`;
    case 'member.role_changed':
      return `made ${event.data.member.name} ${event.data.member.role}`;
    case 'member.updated':
      return 'changed their name or avatar';
    case 'vibe.created':
      return `created vibe "${event.data.vibe.name}"`;
    case 'vibe.updated':
      return `updated vibe "${event.data.vibe.name}"`;
    case 'vibe.deleted':
      return `deleted ${named('vibe', event.data.vibeId)}`;
    case 'vibes.reordered':
      return `reordered the vibes: ${event.data.vibeIds.map((id) => nameOf(id) ?? '?').join(', ')}`;
    case 'cut.created':
      return `created cut "${event.data.cut.name}"`;
    case 'cut.updated':
      return `updated cut "${event.data.cut.name}"`;
    case 'cut.moved': {
      const from = nameOf(event.data.fromVibeId);
      const to = nameOf(event.data.cut.vibeId);
      return `moved cut "${event.data.cut.name}"${from === undefined ? '' : ` from "${from}"`} to ${to === undefined ? 'a vibe' : `"${to}"`}`;
    }
    case 'cut.deleted':
      return `deleted ${named('cut', event.data.cutId)}`;
    case 'file.uploaded': {
      const { file } = event.data;
      return `uploaded "${file.name}" to ${named('cut', file.cutId)} (${TYPE_LABELS[file.type]}, ${formatBytes(file.size)})`;
    }
    case 'file.deleted':
      return `deleted ${named('file', event.data.fileId)}`;
    case 'file.shared':
      return `shared ${named('file', event.data.fileId)} ${event.data.expiresAt ? `until ${formatTime(event.data.expiresAt)} UTC` : '(no expiry)'}`;
    case 'file.analyzed':
      // The actor is the uploader: the analysis completes their upload.
      return `${named('file', event.data.fileId)} analysed: ${event.data.analysis}`;
    case 'preview.ready':
      // The actor is the uploader: the preview completes their upload.
      return `${named('file', event.data.fileId)} preview ready (${formatBytes(event.data.preview.bytes ?? 0)})`;
    case 'cut.shared':
      return `shared ${named('cut', event.data.cutId)} ${event.data.expiresAt ? `until ${formatTime(event.data.expiresAt)} UTC` : '(no expiry)'}`;
    case 'comment.created':
      return `${event.data.parentId === null ? 'commented on' : 'replied on'} ${named('file', event.data.fileId)}${event.data.atMs === null ? '' : ` at ${clockTime(event.data.atMs)}`}`;
    case 'comment.updated':
      return `edited a comment on ${named('file', event.data.fileId)}`;
    case 'comment.resolved':
      return `resolved a comment on ${named('file', event.data.fileId)}`;
    case 'comment.reopened':
      return `reopened a comment on ${named('file', event.data.fileId)}`;
    case 'comment.deleted':
      return `deleted a comment on ${named('file', event.data.fileId)}`;
    case 'project.trashed':
      return 'moved the project to the trash';
    case 'project.restored':
      return 'restored the project from the trash';
    case 'vibe.trashed':
      return `moved ${named('vibe', event.data.vibeId)} to the trash`;
    case 'vibe.restored':
      return `restored ${named('vibe', event.data.vibeId)} from the trash`;
    case 'cut.trashed':
      return `moved ${named('cut', event.data.cutId)} to the trash`;
    case 'cut.restored':
      return `restored ${named('cut', event.data.cutId)} from the trash`;
    case 'file.trashed':
      return `moved ${named('file', event.data.fileId)} to the trash`;
    case 'file.restored':
      return `restored ${named('file', event.data.fileId)} from the trash`;
    case 'comment.trashed':
      return `moved a comment on ${named('file', event.data.fileId)} to the trash`;
    case 'comment.restored':
      return `restored a comment on ${named('file', event.data.fileId)} from the trash`;
    case 'file.reviewed':
      return event.data.state === null
        ? `withdrew their review of ${named('file', event.data.fileId)}`
        : `${event.data.state === 'approved' ? 'approved' : 'requested changes to'} ${named('file', event.data.fileId)}`;
    case 'review.requested':
      return `asked ${event.data.userIds.map((id) => nameOf(id) ?? 'a member').join(', ')} to review "${event.data.name}" v${event.data.version}`;
    case 'review.gate_passed':
      // The actor's change (a review, a resolved comment, the policy) is what got the version through.
      return `made "${event.data.name}" v${event.data.version} ready under the review policy (${event.data.review.approved} of ${event.data.policy.approvals} approvals)`;
  }
}
