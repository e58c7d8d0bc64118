import { seal, unseal } from '../core/sealed.js';
import type { WebhookRow } from './repository.js';

/** What a webhook's signing secrets are sealed for (core/sealed.ts), with the endpoint's id as context. */
const PURPOSE = 'webhook signing secret';

export const sealSecret = (serverSecret: string, webhookId: string, secret: string): Buffer => seal(serverSecret, PURPOSE, webhookId, secret);

/**
 * The secrets that sign a delivery now: the current one, and the one before a rotation while it overlaps.
 * One that no longer opens (the server's secret changed) signs nothing.
 */
export function openSecrets(serverSecret: string, webhook: Pick<WebhookRow, 'id' | 'secret' | 'previousSecret' | 'previousSecretUntil'>, now: Date): string[] {
  const sealed = [webhook.secret];
  if (webhook.previousSecret && webhook.previousSecretUntil && webhook.previousSecretUntil > now) sealed.push(webhook.previousSecret);
  return sealed.map((value) => unseal(serverSecret, PURPOSE, webhook.id, value)).filter((secret): secret is string => secret !== null);
}
