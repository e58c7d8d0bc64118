import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/exit-codes.js';
import { clockTime, parseTime } from '../../src/times.js';

describe('parseTime (--at, --to, --offset)', () => {
  it.each([
    ['0', 0],
    ['83', 83_000],
    ['83s', 83_000],
    ['83.5s', 83_500],
    ['83.5', 83_500],
    ['0.045', 45],
    ['1:23', 83_000],
    ['1:23.450', 83_450],
    ['1:23.45', 83_450],
    ['01:23.4', 83_400],
    ['75:00', 4_500_000],
    ['1:02:03', 3_723_000],
    ['1:02:03.007', 3_723_007],
    [' 2s ', 2_000],
  ])('reads %j as %i ms', (text, ms) => {
    expect(parseTime(text, '--at')).toBe(ms);
  });

  it.each(['', 's', '-1', '1.2345', '1:2', '1:60', '1:60:00', '1:02:60', '1::23', '1:23:45:00', '1m', 'abc', '1,5'])('refuses %j as a usage error naming the flag', (text) => {
    expect(() => parseTime(text, '--to')).toThrow(expect.objectContaining({ exitCode: EXIT.usage, message: expect.stringContaining(`--to: "${text}"`) }));
  });

  it('shows times as minutes, seconds and milliseconds, with hours when there are some, and reads them back', () => {
    for (const [ms, shown] of [
      [0, '0:00.000'],
      [83_450, '1:23.450'],
      [3_723_007, '1:02:03.007'],
    ] as const) {
      expect(clockTime(ms)).toBe(shown);
      expect(parseTime(shown, '--at')).toBe(ms);
    }
  });
});
