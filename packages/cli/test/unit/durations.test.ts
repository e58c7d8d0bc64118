import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/durations.js';
import { EXIT } from '../../src/exit-codes.js';

describe('parseDuration (--expires)', () => {
  it('reads seconds, minutes, hours, days and weeks, in either case', () => {
    expect(parseDuration('90')).toBe(90);
    expect(parseDuration('90s')).toBe(90);
    expect(parseDuration('30m')).toBe(1800);
    expect(parseDuration('12H')).toBe(43_200);
    expect(parseDuration(' 7d ')).toBe(604_800);
    expect(parseDuration('7 d')).toBe(604_800);
    expect(parseDuration('52w')).toBe(31_449_600);
  });

  it('is a usage error for anything else', () => {
    for (const value of ['', 'd', '1.5h', '-1d', '7y', '7dd']) {
      expect(() => parseDuration(value), value).toThrow(expect.objectContaining({ exitCode: EXIT.usage }));
    }
  });
});
