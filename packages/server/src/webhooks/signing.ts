// Standard Webhooks 1.0 signing (§19): `whsec_` secrets of 32 random bytes; a signature is
// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed by the secret's bytes, over the exact body sent.
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** The `webhook-signature` header: one `v1,` signature per secret, space-separated (two while a rotation overlaps). */
export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
