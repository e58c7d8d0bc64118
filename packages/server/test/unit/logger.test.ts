import { describe, expect, it } from 'vitest';
import { Logger } from '../../src/core/logger.js';

describe('Logger', () => {
  it('says which levels it writes, so callers gather fields only for lines that are written', () => {
    const warn = new Logger('warn');
    expect([warn.enabled('debug'), warn.enabled('info'), warn.enabled('warn'), warn.enabled('error')]).toEqual([false, false, true, true]);
    expect(new Logger('info').enabled('info')).toBe(true);
    expect(new Logger('silent').enabled('error')).toBe(false);
  });
});
