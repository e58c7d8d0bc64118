// One-click unsubscribe links (RFC 8058): `PUBLIC_URL/unsubscribe/<token>`, the token naming an account and a
// kind of email, signed with the server's secret (HMAC-SHA256), so it needs no sign-in, no stored state, and
// cannot be made for another account or kind. It is a bearer secret in a path (`:token`): the log redacts it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { NOTIFICATION_KINDS, type NotificationKind } from '@bandcollab/sdk/contract';

const MAC_LABEL = 'bandcollab unsubscribe v1\0';
const MAC_BYTES = 32;
const UUID_BYTES = 16;

const mac = (secret: string, payload: Buffer): Buffer => createHmac('sha256', secret).update(MAC_LABEL).update(payload).digest();

const uuidBytes = (id: string): Buffer => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidOf = (bytes: Buffer): string => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

export function unsubscribeToken(secret: string, userId: string, kind: NotificationKind): string {
  const payload = Buffer.concat([uuidBytes(userId), Buffer.from([NOTIFICATION_KINDS.indexOf(kind)])]);
  return Buffer.concat([payload, mac(secret, payload)]).toString('base64url');
}

/** The account and kind a token names, or null for one this server did not sign. */
export function readUnsubscribeToken(secret: string, token: string): { userId: string; kind: NotificationKind } | null {
  if (!/^[\w-]{1,200}$/.test(token)) return null;
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length !== UUID_BYTES + 1 + MAC_BYTES) return null;
  const payload = bytes.subarray(0, UUID_BYTES + 1);
  if (!timingSafeEqual(bytes.subarray(UUID_BYTES + 1), mac(secret, payload))) return null;
  const kind = NOTIFICATION_KINDS[payload[UUID_BYTES]!];
  return kind ? { userId: uuidOf(payload.subarray(0, UUID_BYTES)), kind } : null;
}
