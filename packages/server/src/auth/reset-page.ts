// The page of an emailed password reset link (§19): a form for the new password that posts to its own address,
// and the page that says how it went. No script, nothing from elsewhere; every string shown is escaped.
import { escapeHtml, htmlPage, PAGE_ICON_SRC, PAGE_STYLE_SRC } from '../core/html-page.js';

/** The form may post only to this server. */
export const RESET_PAGE_CSP = ["default-src 'none'", PAGE_STYLE_SRC, PAGE_ICON_SRC, "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"].join('; ');

export function renderResetPage(action: string, problem: string | null = null): string {
  return htmlPage(
    'Choose a new password · bandcollab',
    `<h1>Choose a new password</h1>
${problem === null ? '' : `<p class="meta" role="alert">${escapeHtml(problem)}</p>`}
<form method="post" action="${escapeHtml(action)}">
<p><label>New password (8 characters or more)<br><input type="password" name="newPassword" autocomplete="new-password" minlength="8" maxlength="1024" required></label></p>
<p><label>The same again<br><input type="password" name="confirm" autocomplete="new-password" minlength="8" maxlength="1024" required></label></p>
<p><button type="submit">Set the password</button></p>
</form>
<p class="expiry">The link works once, within an hour of the mail. Setting the password signs out every session of the account.</p>`,
  );
}

export function renderResetDonePage(): string {
  return htmlPage(
    'Password changed · bandcollab',
    `<h1>Password changed</h1>
<p class="meta">Every session of the account has ended. Sign in again with the new password: <code>band auth login</code>.</p>`,
  );
}

export function renderResetGonePage(): string {
  return htmlPage(
    'Reset link not valid · bandcollab',
    `<h1>This reset link does not work</h1>
<p class="meta">It is unknown, was used already or is more than an hour old. Ask for a new one: <code>band auth forgot-password &lt;email&gt;</code>.</p>`,
  );
}
