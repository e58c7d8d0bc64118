// The page of a notification email's unsubscribe link (RFC 8058): a GET shows one button (mail scanners follow
// links, so a GET changes nothing); its POST, or a mail client's one-click POST, turns the kind off. No script,
// nothing from elsewhere.
import type { NotificationKind } from '@bandcollab/sdk/contract';
import { escapeHtml, htmlPage, PAGE_ICON_SRC, PAGE_STYLE_SRC } from '../core/html-page.js';

export const UNSUBSCRIBE_PAGE_CSP = ["default-src 'none'", PAGE_STYLE_SRC, PAGE_ICON_SRC, "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"].join('; ');

const WHAT: Record<NotificationKind, string> = {
  mentions: 'emails when someone mentions you in a comment',
  replies: 'emails when someone replies to your comments',
  reviewRequests: 'emails when someone asks you to review a version',
  newVersions: 'emails about new versions of files you commented on or reviewed',
  webhooks: 'emails when one of your webhook endpoints is disabled',
  digest: "the digest of your projects' activity",
};

export function renderUnsubscribePage(action: string, kind: NotificationKind): string {
  return htmlPage(
    'Unsubscribe · bandcollab',
    `<h1>Stop these emails?</h1>
<p class="meta">This turns off ${escapeHtml(WHAT[kind])}. Everything else stays as it is.</p>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<p><button type="submit">Turn them off</button></p>
</form>`,
  );
}

export function renderUnsubscribedPage(kind: NotificationKind): string {
  return htmlPage(
    'Unsubscribed · bandcollab',
    `<h1>Done</h1>
<p class="meta">You no longer get ${escapeHtml(WHAT[kind])}. Turn them back on with <code>band notify set</code>.</p>`,
  );
}

export function renderUnknownLinkPage(): string {
  return htmlPage(
    'Unsubscribe link not valid · bandcollab',
    `<h1>This unsubscribe link does not work</h1>
<p class="meta">It is not one this server made (perhaps it was cut short). Choose what you get with <code>band notify set</code>.</p>`,
  );
}
