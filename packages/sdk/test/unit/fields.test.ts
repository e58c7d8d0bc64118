import { describe, expect, it } from 'vitest';
import { descriptionSchema, emailSchema, isUuid, nameSchema, uuidSchema } from '../../src/contract/fields.js';

const messageOf = (result: { success: boolean; error?: { issues: { message: string }[] } }) => result.error?.issues[0]?.message;

describe('nameSchema', () => {
  it('trims, and takes 1 to 200 characters', () => {
    expect(nameSchema.parse('  Demo  ')).toBe('Demo');
    expect(nameSchema.parse('x'.repeat(200))).toHaveLength(200);
    expect(messageOf(nameSchema.safeParse('x'.repeat(201)))).toBe('must be at most 200 characters');
    expect(messageOf(nameSchema.safeParse('   '))).toBe('must not be empty');
  });

  it('refuses control characters and non-strings', () => {
    expect(messageOf(nameSchema.safeParse('a\nb'))).toBe('must not contain control characters');
    expect(messageOf(nameSchema.safeParse('a\u0000b'))).toBe('must not contain control characters');
    expect(messageOf(nameSchema.safeParse(42))).toBe('must be a string');
  });
});

describe('descriptionSchema', () => {
  it('takes null, line breaks and tabs, up to 2000 characters', () => {
    expect(descriptionSchema.parse(null)).toBeNull();
    expect(descriptionSchema.parse('verse\n\tchorus')).toBe('verse\n\tchorus');
    expect(messageOf(descriptionSchema.safeParse('x'.repeat(2001)))).toBe('must be at most 2000 characters');
  });

  it('refuses NUL, which PostgreSQL text cannot hold', () => {
    expect(messageOf(descriptionSchema.safeParse('a\u0000b'))).toBe('must not contain control characters other than newline and tab');
  });
});

describe('emailSchema', () => {
  it('trims and lower-cases', () => {
    expect(emailSchema.parse('  Ana@Example.COM ')).toBe('ana@example.com');
  });

  it('refuses what is not an address, and addresses over 320 characters', () => {
    expect(messageOf(emailSchema.safeParse('ana'))).toBe('must be an email address');
    const long = `${'a'.repeat(60)}@${Array.from({ length: 5 }, () => 'b'.repeat(60)).join('.')}.com`;
    expect(emailSchema.safeParse(long).error?.issues.map((issue) => issue.message)).toContain('must be at most 320 characters');
  });
});

describe('ids', () => {
  it('isUuid takes any 8-4-4-4-12 hex id; uuidSchema lower-cases a real UUID', () => {
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
    expect(isUuid('not-a-uuid')).toBe(false);
    expect(isUuid(7)).toBe(false);
    expect(uuidSchema.parse('3F2504E0-4F89-41D3-9A0C-0305E82C3301')).toBe('3f2504e0-4f89-41d3-9a0c-0305e82c3301');
    expect(uuidSchema.safeParse('3f2504e0').success).toBe(false);
  });
});
