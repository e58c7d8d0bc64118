// How band shows the caller's email notification preferences (notify).
import type { NotificationPreferences } from '@bandcollab/sdk';

/** `band notify show`: each kind of email, on or off, and the digest's frequency. */
export function notificationPreferencesView(preferences: NotificationPreferences): string {
  const { email } = preferences;
  const onOff = (on: boolean) => (on ? 'on' : 'off');
  const lines = [
    `mentions         ${onOff(email.mentions)}`,
    `replies          ${onOff(email.replies)}`,
    `review-requests  ${onOff(email.reviewRequests)}`,
    `new-versions     ${onOff(email.newVersions)}`,
    `webhooks         ${onOff(email.webhooks)}`,
    `digest           ${email.digest}`,
  ];
  if (!preferences.emailEnabled) lines.push('', 'This server sends no email (SMTP_URL and MAIL_FROM unset): the preferences are kept, nothing is sent.');
  return lines.join('\n');
}
