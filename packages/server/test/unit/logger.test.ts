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

describe('Logger redaction', () => {
  it('writes the credential headers, the events subprotocol among them, as [redacted]', () => {
    const lines: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => lines.push(chunk) > 0) as typeof process.stdout.write;
    try {
      new Logger('info').info('upgrade', {
        headers: {
          authorization: 'Bearer secret-1',
          cookie: 'access_token=secret-2',
          'Sec-WebSocket-Protocol': 'bandcollab.v1, bandcollab.bearer.c2VjcmV0LTM',
          host: 'band.example.com',
        },
      });
    } finally {
      process.stdout.write = write;
    }
    const logged = JSON.parse(lines.join('')) as { headers: Record<string, string> };
    expect(logged.headers).toEqual({ authorization: '[redacted]', cookie: '[redacted]', 'Sec-WebSocket-Protocol': '[redacted]', host: 'band.example.com' });
  });
});
