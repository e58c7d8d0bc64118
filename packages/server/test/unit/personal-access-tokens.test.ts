import { describe, expect, it } from 'vitest';
import {
  checksum,
  generatePersonalAccessToken,
  isValidPersonalAccessToken,
  TOKEN_LENGTH,
  tokenHint,
} from '../../src/core/personal-access-tokens.js';

// Vectors computed independently (Python: zlib.crc32 of the 30 characters, in base62 0-9A-Za-z, 6 digits).
const VECTORS = [
  { random: 'abcdefghijklmnopqrstuvwxyz0123', crc32: 2154666580, check: '2LolCm' },
  { random: '000000000000000000000000000000', crc32: 2011552642, check: '2C8GjS' },
  { random: 'ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ', crc32: 2957800655, check: '3EAd4B' },
];

describe('personal access token format', () => {
  it.each(VECTORS)('checks $random with $check', ({ random, check }) => {
    expect(checksum(random)).toBe(check);
    expect(isValidPersonalAccessToken(`bcp_${random}${check}`)).toBe(true);
  });

  it('refuses a one-character change anywhere in the random part or the check characters', () => {
    const token = `bcp_${VECTORS[0]!.random}${VECTORS[0]!.check}`;
    for (let i = 4; i < token.length; i += 1) {
      const replacement = token[i] === 'x' ? 'y' : 'x';
      const changed = token.slice(0, i) + replacement + token.slice(i + 1);
      expect(isValidPersonalAccessToken(changed), changed).toBe(false);
    }
  });

  it('refuses the wrong prefix, length or alphabet', () => {
    const token = `bcp_${VECTORS[1]!.random}${VECTORS[1]!.check}`;
    for (const malformed of [
      token.replace('bcp_', 'bcx_'),
      token.replace('bcp_', 'BCP_'),
      token.slice(0, -1),
      `${token}0`,
      `bcp_${'0'.repeat(29)}-${VECTORS[1]!.check}`,
      'bcp_',
      '',
    ]) {
      expect(isValidPersonalAccessToken(malformed), malformed).toBe(false);
    }
  });

  it('generates 40-character tokens whose checksum holds, all different, with a hint of their last 4 characters', () => {
    const tokens = Array.from({ length: 200 }, generatePersonalAccessToken);
    for (const token of tokens) {
      expect(token).toMatch(/^bcp_[0-9A-Za-z]{36}$/);
      expect(token).toHaveLength(TOKEN_LENGTH);
      expect(isValidPersonalAccessToken(token)).toBe(true);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(tokenHint(tokens[0]!)).toBe(`bcp_${tokens[0]!.slice(-4)}`);
  });

  it('draws every base62 character', () => {
    const seen = new Set(Array.from({ length: 400 }, () => generatePersonalAccessToken().slice(4, 34)).join(''));
    expect(seen.size).toBe(62);
  });
});
