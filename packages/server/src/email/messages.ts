// The mails the server sends (§19): plain text, with a minimal HTML alternative in which every name from a
// user is escaped text; no images, no tracking, links only to PUBLIC_URL.
import type { Role } from '@bandcollab/sdk/contract';
import { escapeHtml } from '../core/html-page.js';
import type { MailContent } from './mailer.js';

/** The HTML alternative: the same paragraphs, escaped, the one link as a link. */
function html(paragraphs: string[], link: { url: string; label: string }): string {
  const body = paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bandcollab</title></head>
<body style="font-family: sans-serif; line-height: 1.5">
${body}
<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>
<p style="color: #666; font-size: small">${escapeHtml(link.url)}</p>
</body></html>`;
}

/** Subjects are one line: a name with a line break cannot add headers or lines to them. */
const oneLine = (text: string): string => text.replace(/[\r\n\t]+/g, ' ').trim();

export function invitationMail(view: { projectName: string; inviterName: string; role: Role; inviteUrl: string; expiresAt: Date }): MailContent {
  const as = view.role === 'ADMIN' ? 'an ADMIN' : 'a MEMBER';
  const paragraphs = [
    `${view.inviterName} invites you to the project "${view.projectName}" on bandcollab, as ${as}.`,
    `Open the link to see the invitation, then sign in (or register) with this email address to accept it. The link works until ${view.expiresAt.toUTCString()}.`,
  ];
  return {
    subject: oneLine(`${view.inviterName} invites you to ${view.projectName} on bandcollab`),
    text: `${paragraphs.join('\n\n')}\n\n${view.inviteUrl}\n`,
    html: html(paragraphs, { url: view.inviteUrl, label: 'See the invitation' }),
  };
}
