import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { rangeOf, type StoredBytes } from '../../src/core/transfer.js';

const modifiedAt = new Date('2026-01-02T03:04:05Z');
const bytes: StoredBytes = { path: '/nowhere', size: 1000, mimeType: 'audio/wav', etag: '"abc"', modifiedAt, downloadName: 'a.wav' };

/** rangeOf reads only the request's headers. */
const range = (headers: Record<string, string>) => rangeOf({ headers } as IncomingMessage, bytes);

describe('rangeOf (the Range header of a download)', () => {
  it('serves the whole file without a Range header', () => {
    expect(range({})).toBeNull();
  });

  it('reads start-end, an open end, and a suffix, clamped to the file', () => {
    expect(range({ range: 'bytes=0-99' })).toEqual({ start: 0, end: 99 });
    expect(range({ range: ' bytes=900- ' })).toEqual({ start: 900, end: 999 });
    expect(range({ range: 'bytes=-100' })).toEqual({ start: 900, end: 999 });
    expect(range({ range: 'bytes=-5000' })).toEqual({ start: 0, end: 999 });
    expect(range({ range: 'bytes=500-5000' })).toEqual({ start: 500, end: 999 });
  });

  it('answers unsatisfiable for a start past the end and an empty suffix', () => {
    expect(range({ range: 'bytes=1000-' })).toBe('unsatisfiable');
    expect(range({ range: 'bytes=-0' })).toBe('unsatisfiable');
  });

  it('serves the whole file for several ranges, other units, bad syntax and a backwards range', () => {
    for (const header of ['bytes=0-1,5-6', 'items=0-1', 'bytes=-', 'bytes=a-b', 'bytes=10-5']) {
      expect(range({ range: header }), header).toBeNull();
    }
  });

  it('honours If-Range only when it names this version, by ETag or date', () => {
    expect(range({ range: 'bytes=0-9', 'if-range': '"abc"' })).toEqual({ start: 0, end: 9 });
    expect(range({ range: 'bytes=0-9', 'if-range': modifiedAt.toUTCString() })).toEqual({ start: 0, end: 9 });
    expect(range({ range: 'bytes=0-9', 'if-range': '"stale"' })).toBeNull();
  });
});
