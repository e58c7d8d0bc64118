// Notification emails (§19), queued inside the transaction of what causes them (the email job sends them after
// it commits; a rollback queues nothing): a mention or a reply to a member's comment, a review asked of them,
// a new version of a file they commented on or reviewed, a webhook endpoint of theirs disabled. Never to the
// actor themself, never to a member who turned that kind off, at most one mail per member per event. Each event
// worth a digest is recorded here too, with whom it was already mailed to (notifications/digest.ts).
import type { NotificationKind, ProjectEvent } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import type { Queryable } from '../core/database.js';
import { CONFIG, SIGNING_SECRET } from '../core/di.js';
import { Mailer } from '../email/mailer.js';
import { notificationMail, type NotificationView } from '../email/messages.js';
import { type ImmediateKind, NotificationsRepository, type Recipient } from './repository.js';
import { unsubscribeToken } from './unsubscribe.js';

/** The events a digest tells of, and how it names them. */
export const DIGEST_LABELS: Partial<Record<ProjectEvent['type'], [one: string, many: string]>> = {
  'file.uploaded': ['file or version uploaded', 'files or versions uploaded'],
  'comment.created': ['comment', 'comments'],
  'comment.resolved': ['comment resolved', 'comments resolved'],
  'file.reviewed': ['review', 'reviews'],
  'review.requested': ['review requested', 'reviews requested'],
  'review.gate_passed': ['version ready for release', 'versions ready for release'],
  'cut.created': ['new cut', 'new cuts'],
  'vibe.created': ['new vibe', 'new vibes'],
  'member.added': ['new member', 'new members'],
};

/** A comment's event (one schema covers comment.created and its siblings). */
type CommentEvent = Extract<ProjectEvent, { data: { commentId: string; mentions: string[] } }>;

/** What the footer of each kind's mail says it is about. */
const ABOUT: Record<NotificationKind, string> = {
  mentions: 'mentions of you',
  replies: 'replies to your comments',
  reviewRequests: 'reviews asked of you',
  newVersions: 'new versions of files you commented on or reviewed',
  webhooks: 'your webhook endpoints',
  digest: "your projects' activity digest",
};

const BODY_SHOWN = 1000;

const clip = (text: string): string => (text.length > BODY_SHOWN ? `${text.slice(0, BODY_SHOWN)}…` : text);

/** `1:23` for a comment's time. */
const timeOf = (ms: number): string => {
  const seconds = Math.floor(ms / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = String(seconds % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
};

@injectable()
export class Notifier {
  constructor(
    @inject(NotificationsRepository) private readonly repository: NotificationsRepository,
    @inject(Mailer) private readonly mailer: Mailer,
    @inject(CONFIG) private readonly config: Config,
    @inject(SIGNING_SECRET) private readonly secret: string,
  ) {}

  /** The unsubscribe link of `kind` for the account: PUBLIC_URL/unsubscribe/<signed token>. */
  unsubscribeUrl(userId: string, kind: NotificationKind): string {
    return `${this.config.publicUrl}/unsubscribe/${unsubscribeToken(this.secret, userId, kind)}`;
  }

  /** A notification mail of `kind` to `to`, in `tx`; false (nothing queued) with email off. */
  async send(tx: Queryable, to: Recipient, kind: NotificationKind, view: Omit<NotificationView, 'about' | 'unsubscribeUrl'>): Promise<boolean> {
    return this.mailer.queue(tx, { kind: `notify_${kind}`, to: to.email, ...notificationMail({ ...view, about: ABOUT[kind], unsubscribeUrl: this.unsubscribeUrl(to.id, kind) }) });
  }

  /** Called by the event publisher inside the event's transaction. */
  async onEvent(tx: Queryable, event: ProjectEvent): Promise<void> {
    if (!this.mailer.enabled) return;
    let notified: string[] = [];
    if (event.type === 'comment.created') notified = await this.commentCreated(tx, event);
    else if (event.type === 'file.uploaded' && event.data.file.series.version > 1) notified = await this.newVersion(tx, event);
    // Those asked were told by the request itself (CommentsService.requestReviews).
    else if (event.type === 'review.requested') notified = event.data.userIds;
    if (DIGEST_LABELS[event.type]) await this.repository.recordActivity(tx, { projectId: event.projectId, actorId: event.actor.id, type: event.type, notified });
  }

  /** Mails each member asked to review (ReviewRequests: those who want it); the ids mailed. */
  async reviewRequested(tx: Queryable, actor: { id: string; name: string }, projectId: string, file: { id: string; name: string; version: number }, userIds: string[]): Promise<string[]> {
    if (!this.mailer.enabled) return [];
    const projectName = await this.repository.projectName(tx, projectId);
    const recipients = await this.wanting(tx, projectId, userIds, actor.id, 'reviewRequests');
    for (const to of recipients) {
      await this.send(tx, to, 'reviewRequests', {
        subject: `${actor.name} asks you to review ${file.name} (v${file.version}) in ${projectName}`,
        paragraphs: [
          `Hello ${to.name},`,
          `${actor.name} asks you to review "${file.name}", version ${file.version}, in the project "${projectName}".`,
          `Listen, then approve it or ask for changes: band review approve ${file.id} (or band review request-changes ${file.id}).`,
        ],
        link: { url: `${this.config.publicUrl}/api/files/${file.id}`, label: 'Open the file' },
      });
    }
    return recipients.map((to) => to.id);
  }

  /** Tells whoever manages a disabled webhook endpoint: its owner, or the project's ADMINs. */
  async webhookDisabled(tx: Queryable, webhook: { id: string; projectId: string | null; userId: string | null; url: string; description: string | null }, reason: string): Promise<void> {
    if (!this.mailer.enabled) return;
    const ids = webhook.userId !== null ? [webhook.userId] : await this.repository.projectAdmins(tx, webhook.projectId!);
    // The URL of a chat endpoint is its secret: the mail names only its host.
    const host = URL.canParse(webhook.url) ? new URL(webhook.url).host : 'the endpoint';
    const name = webhook.description ? `"${webhook.description}" (${host})` : host;
    for (const id of ids) {
      const to = await this.repository.account(tx, id);
      if (!to || !to.preferences.webhooks) continue;
      await this.send(tx, to, 'webhooks', {
        subject: `Your bandcollab webhook endpoint ${webhook.description ?? host} was disabled`,
        paragraphs: [
          `Hello ${to.name},`,
          `The webhook endpoint ${name} was disabled and receives no more deliveries: ${reason}.`,
          `Once it works again, turn it back on with band webhook edit ${webhook.id} --enable; its delivery log shows what failed.`,
        ],
        link: { url: `${this.config.publicUrl}/api/webhooks/${webhook.id}/deliveries`, label: 'The delivery log' },
      });
    }
  }

  /** A mention (mentions), else a reply to the member's comment (replies): one mail each at most. */
  private async commentCreated(tx: Queryable, event: CommentEvent): Promise<string[]> {
    const context = await this.repository.commentContext(tx, event.data.commentId);
    if (!context) return [];
    const projectName = await this.repository.projectName(tx, event.projectId);
    // A guest's comment (through a feedback link) is told under the guest's name, not the link creator's.
    const actor = context.guestName === null ? event.actor : { id: event.actor.id, name: `${context.guestName} (guest)` };
    const where = `"${context.fileName}" in "${projectName}"${context.atMs === null ? '' : ` at ${timeOf(context.atMs)}`}`;
    const link = { url: `${this.config.publicUrl}/api/comments/${event.data.commentId}`, label: 'Open the comment' };
    const hint = `Answer with band comment reply ${event.data.parentId ?? event.data.commentId} "…".`;
    const mailed: string[] = [];
    for (const to of await this.wanting(tx, event.projectId, event.data.mentions, actor.id, 'mentions')) {
      await this.send(tx, to, 'mentions', {
        subject: `${actor.name} mentioned you on ${context.fileName}`,
        paragraphs: [`Hello ${to.name},`, `${actor.name} mentioned you in a comment on ${where}:`],
        quote: clip(context.body),
        link,
      });
      mailed.push(to.id);
    }
    // A guest's reply names no account as its author; the event's actor is the link's creator.
    const parentAuthor = event.data.parentId === null ? null : await this.repository.commentAuthor(tx, event.data.parentId);
    if (parentAuthor !== null && !mailed.includes(parentAuthor) && !event.data.mentions.includes(parentAuthor)) {
      for (const to of await this.wanting(tx, event.projectId, [parentAuthor], actor.id, 'replies')) {
        await this.send(tx, to, 'replies', {
          subject: `${actor.name} replied to your comment on ${context.fileName}`,
          paragraphs: [`Hello ${to.name},`, `${actor.name} replied to your comment on ${where}:`, hint],
          quote: clip(context.body),
          link,
        });
        mailed.push(to.id);
      }
    }
    return mailed;
  }

  private async newVersion(tx: Queryable, event: Extract<ProjectEvent, { type: 'file.uploaded' }>): Promise<string[]> {
    const { file } = event.data;
    const participants = await this.repository.seriesParticipants(tx, file.series.id, file.id);
    const recipients = await this.wanting(tx, event.projectId, participants, event.actor.id, 'newVersions');
    const projectName = await this.repository.projectName(tx, event.projectId);
    for (const to of recipients) {
      await this.send(tx, to, 'newVersions', {
        subject: `New version of ${file.name}: v${file.series.version} in ${projectName}`,
        paragraphs: [
          `Hello ${to.name},`,
          `${event.actor.name} uploaded version ${file.series.version} of "${file.name}" in the project "${projectName}", which you commented on or reviewed.`,
          `Listen with band file versions ${file.id}; review it with band review approve ${file.id}.`,
        ],
        link: { url: `${this.config.publicUrl}/api/files/${file.id}`, label: 'Open the new version' },
      });
    }
    return recipients.map((to) => to.id);
  }

  /** The active members among `userIds`, less the actor, who want mails of `kind`. */
  private async wanting(tx: Queryable, projectId: string, userIds: string[], actorId: string, kind: ImmediateKind): Promise<Recipient[]> {
    const others = [...new Set(userIds)].filter((id) => id !== actorId);
    return (await this.repository.members(tx, projectId, others)).filter((to) => to.preferences[kind]);
  }
}
