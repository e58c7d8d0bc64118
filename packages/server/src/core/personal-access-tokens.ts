import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Personal access tokens: `bcp_` + 30 random base62 characters + 6 base62 characters of the CRC32 of those
 * 30. The prefix lets secret scanners find one, the checksum lets them (and us, before any query) tell a
 * real one from a typo or a made-up string offline. The format is the API's; its 30 characters carry about
 * 178 random bits.
 */
export const TOKEN_PREFIX = 'bcp_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
export const TOKEN_LENGTH = TOKEN_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
const TOKEN_SHAPE = /^bcp_[0-9A-Za-z]{36}$/;

/** A new token. Random bytes of 248 and above are skipped, so every base62 character is equally likely. */
export function generatePersonalAccessToken(): string {
  let random = '';
  while (random.length < RANDOM_LENGTH) {
    for (const byte of randomBytes(RANDOM_LENGTH * 2)) {
      if (byte < 248 && random.length < RANDOM_LENGTH) random += BASE62[byte % 62];
    }
  }
  return TOKEN_PREFIX + random + checksum(random);
}

/** Whether `value` has the token's prefix: it is then judged as a personal access token, never as an access token. */
export const looksLikePersonalAccessToken = (value: string): boolean => value.startsWith(TOKEN_PREFIX);

/** Whether `token` is well formed and its checksum matches: checked before any database lookup. */
export function isValidPersonalAccessToken(token: string): boolean {
  if (!TOKEN_SHAPE.test(token)) return false;
  const random = token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + RANDOM_LENGTH);
  return token.slice(TOKEN_PREFIX.length + RANDOM_LENGTH) === checksum(random);
}

/** What a token is shown as after creation: the prefix and its last 4 characters. */
export const tokenHint = (token: string): string => TOKEN_PREFIX + token.slice(-4);

/** The CRC32 of `random`, in 6 base62 characters (62^6 > 2^32), most significant first. */
export function checksum(random: string): string {
  let value = crc32(random);
  let encoded = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i += 1) {
    encoded = BASE62[value % 62] + encoded;
    value = Math.floor(value / 62);
  }
  return encoded;
}
