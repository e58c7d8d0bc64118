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

export function passwordResetMail(view: { name: string; resetUrl: string }): MailContent {
  const paragraphs = [
    `Hello ${view.name},`,
    'Someone (we hope you) asked to reset the password of your bandcollab account. Open the link within an hour to choose a new one; it works once, and signs out every session of the account.',
    'If you did not ask for it, ignore this mail: your password stays as it is.',
  ];
  return {
    subject: 'Reset your bandcollab password',
    text: `${paragraphs.join('\n\n')}\n\n${view.resetUrl}\n`,
    html: html(paragraphs, { url: view.resetUrl, label: 'Choose a new password' }),
  };
}

/** An account that signs in only through the identity provider has no password to reset. */
export function useProviderMail(view: { name: string; signInUrl: string }): MailContent {
  const paragraphs = [
    `Hello ${view.name},`,
    'Someone (we hope you) asked to reset the password of your bandcollab account, but it has no password: you sign in through your organisation\'s identity provider. Sign in there as usual; its password is reset with that provider.',
  ];
  return {
    subject: 'Your bandcollab account signs in through your identity provider',
    text: `${paragraphs.join('\n\n')}\n\n${view.signInUrl}\n`,
    html: html(paragraphs, { url: view.signInUrl, label: 'Open bandcollab' }),
  };
}

/** What a notification mail says, before its footer: the action link, and the kind its unsubscribe link turns off. */
export interface NotificationView {
  subject: string;
  paragraphs: string[];
  /** Quoted text from a user (a comment's body): kept as written, line breaks too, and escaped in the HTML part. */
  quote?: string;
  link: { url: string; label: string };
  /** What the footer says the mail is about, e.g. "mentions of you". */
  about: string;
  unsubscribeUrl: string;
}

/**
 * A notification (§19): plain text and a minimal HTML part, a footer with the one-click unsubscribe link of
 * its kind, and the RFC 8058 headers that let a mail client offer it (List-Unsubscribe with POST).
 */
export function notificationMail(view: NotificationView): MailContent {
  const footer = `You get this mail for ${view.about}. Turn these mails off (one click, no sign-in): ${view.unsubscribeUrl} — or choose what you get with band notify set.`;
  const quoted = view.quote === undefined ? '' : `${view.quote.split('\n').map((line) => `> ${line}`).join('\n')}\n\n`;
  const text = `${view.paragraphs.join('\n\n')}\n\n${quoted}${view.link.label}: ${view.link.url}\n\n-- \n${footer}\n`;
  const paragraphs = view.paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('\n');
  const quote = view.quote === undefined ? '' : `<blockquote style="white-space: pre-wrap; border-left: 3px solid #ccc; margin: 0; padding-left: 1em">${escapeHtml(view.quote)}</blockquote>\n`;
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bandcollab</title></head>
<body style="font-family: sans-serif; line-height: 1.5">
${paragraphs}
${quote}<p><a href="${escapeHtml(view.link.url)}">${escapeHtml(view.link.label)}</a></p>
<p style="color: #666; font-size: small">You get this mail for ${escapeHtml(view.about)}. <a href="${escapeHtml(view.unsubscribeUrl)}">Turn these mails off</a> (one click, no sign-in), or choose what you get with <code>band notify set</code>.</p>
</body></html>`;
  return {
    subject: oneLine(view.subject),
    text,
    html,
    headers: { 'List-Unsubscribe': `<${view.unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}
