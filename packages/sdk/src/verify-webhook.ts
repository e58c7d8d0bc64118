// The receiving side of webhooks (§19, Standard Webhooks 1.0): an app checks a delivery before trusting it.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** A delivery whose signature, timestamp or body does not check out. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** A delivery's body: the event type, when it happened, and the event. */
export interface WebhookPayload {
  type: string;
  timestamp: string;
  data: unknown;
}

/** A delivery older or newer than this is refused (a replay). */
const TOLERANCE_SECONDS = 5 * 60;

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()]);
  const one = Array.isArray(value) ? value[0] : value;
  if (!one) throw new WebhookVerificationError(`The ${name} header is missing`);
  return one;
}

/**
 * Checks a delivery with the endpoint's `whsec_` secret: a `v1` signature of `{webhook-id}.{webhook-timestamp}.{body}`
 * must match (either one while a rotated secret overlaps) and the timestamp be within 5 minutes. `body` is the
 * raw request body, exactly as received (not re-serialised JSON). Returns the parsed body; throws
 * WebhookVerificationError otherwise.
 */
export function verifyWebhook(secret: string, headers: HeaderSource, body: string | Uint8Array, now: Date = new Date()): WebhookPayload {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(now.getTime() / 1000 - seconds) > TOLERANCE_SECONDS) {
    throw new WebhookVerificationError('The webhook-timestamp is missing or too far from now');
  }
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${text}`).digest();
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('No webhook-signature matches the secret');
  return JSON.parse(text) as WebhookPayload;
}
