import type { InvitationView } from '@bandcollab/sdk/contract';
import { escapeHtml, htmlPage, PAGE_ICON_SRC, PAGE_STYLE_SRC } from '../core/html-page.js';

/** No scripts, no images, nothing from another origin: the page's own inline style only. */
export const INVITE_PAGE_CSP = ["default-src 'none'", PAGE_STYLE_SRC, PAGE_ICON_SRC, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join('; ');

/** What the invitation link offers and how to accept it; `inviteUrl` is the page's own address. */
export function renderInvitePage(view: InvitationView, inviteUrl: string): string {
  const project = escapeHtml(view.projectName);
  const url = escapeHtml(inviteUrl);
  return htmlPage(
    `Invitation to ${project} · bandcollab`,
    `<h1>Join ${project}</h1>
<p class="meta">${escapeHtml(view.invitedBy.name)} invites you as ${view.role === 'ADMIN' ? 'an ADMIN' : 'a MEMBER'}.</p>
<p>Sign in with the email address this invitation was sent to, then accept it with the command-line client:</p>
<pre>band invitation accept ${url}</pre>
<p>No account yet? Register with that email address and this link:</p>
<pre>band auth register --invite ${url}</pre>
<p class="expiry">This invitation works until ${new Date(view.expiresAt).toUTCString()}.</p>`,
  );
}

export function renderInviteNotFoundPage(): string {
  return htmlPage(
    'Invitation not found · bandcollab',
    `<h1>Invitation not found</h1>
<p class="meta">This invitation does not exist, has expired, was revoked or was already accepted.</p>`,
  );
}
