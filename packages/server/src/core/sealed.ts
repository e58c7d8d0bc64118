import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * A secret kept so the server can hand it out again, never readable from the database alone: AES-256-GCM
 * under a key derived (HKDF-SHA256) from the server's secret, the `purpose` and the record it belongs to
 * (`context`, such as its id), so a sealed value copied to another record does not open there.
 * Stored as iv (12 bytes), tag (16), ciphertext.
 */
export function seal(secret: string, purpose: string, context: string, plaintext: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret, purpose, context), iv);
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

/** The sealed value, or null when it does not open: the server's secret changed since it was sealed. */
export function unseal(secret: string, purpose: string, context: string, stored: Buffer): string | null {
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret, purpose, context), stored.subarray(0, 12));
    decipher.setAuthTag(stored.subarray(12, 28));
    return Buffer.concat([decipher.update(stored.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

const keyOf = (secret: string, purpose: string, context: string): Buffer => Buffer.from(hkdfSync('sha256', secret, context, purpose, 32));
