// How band shows webhook endpoints and their deliveries to people (webhook).
import type { CreatedWebhook, Webhook, WebhookDelivery } from '@bandcollab/sdk';
import { formatTime, type Output } from '../render.js';

export function createdWebhookView(webhook: CreatedWebhook, rotated: boolean): string {
  return (
    `${rotated ? 'Rotated the secret of' : 'Added'} webhook ${webhook.id} → ${webhook.url}. ` +
    `Its secret is not shown again: store it where the receiver checks signatures${rotated ? ' (the old one signs beside it for 24 hours)' : ''}.`
  );
}

export function webhookTable(out: Output, webhooks: readonly Webhook[]): string {
  return out.table(
    webhooks,
    [
      { header: 'URL', value: (w) => w.url },
      { header: 'EVENTS', value: (w) => w.events.join(',') },
      { header: 'FORMAT', value: (w) => w.format },
      { header: 'STATUS', value: (w) => (w.enabled ? 'enabled' : `disabled${w.disabledReason ? `: ${w.disabledReason}` : ''}`) },
      { header: 'ID', value: (w) => w.id },
    ],
    'No webhooks: band webhook add <url> --events "*"',
  );
}

export function webhookView(webhook: Webhook): string {
  return [
    `Webhook ${webhook.id}${webhook.description ? ` (${webhook.description})` : ''}`,
    `  url:     ${webhook.url}`,
    `  events:  ${webhook.events.join(', ')}`,
    `  format:  ${webhook.format}`,
    `  scope:   ${webhook.projectId === null ? 'your account (all your projects)' : `project ${webhook.projectId}`}`,
    `  status:  ${webhook.enabled ? 'enabled' : `disabled${webhook.disabledReason ? `: ${webhook.disabledReason}` : ''}`}`,
  ].join('\n');
}

export function webhookDeliveryTable(out: Output, deliveries: readonly WebhookDelivery[]): string {
  return out.table(
    deliveries,
    [
      { header: 'WHEN', value: (d) => formatTime(d.createdAt) },
      { header: 'TYPE', value: (d) => d.type },
      { header: 'STATUS', value: (d) => d.status },
      { header: 'ATTEMPTS', value: (d) => String(d.attempts.length) },
      { header: 'LAST', value: (d) => lastAttempt(d) },
      { header: 'NEXT', value: (d) => (d.nextAttemptAt ? formatTime(d.nextAttemptAt) : '') },
      { header: 'ID', value: (d) => d.id },
    ],
    'No deliveries in the last 30 days',
  );
}

function lastAttempt(delivery: WebhookDelivery): string {
  const last = delivery.attempts.at(-1);
  if (!last) return '';
  return `${last.statusCode ?? last.error ?? ''} in ${last.durationMs} ms`;
}

export const queuedDeliveryView = (delivery: WebhookDelivery): string => `Queued delivery ${delivery.id} (${delivery.type}).`;
