import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { rangeOf, type StoredBytes } from '../../src/core/transfer.js';

const modifiedAt = new Date('2026-01-02T03:04:05Z');
const bytes: StoredBytes = { key: 'files/nowhere.wav', read: () => Promise.reject(new Error('not read')), openReader: () => Promise.reject(new Error('not read')), size: 1000, mimeType: 'audio/wav', etag: '"abc"', modifiedAt, downloadName: 'a.wav' };

/** rangeOf reads only the request's headers. */
const range = (headers: Record<string, string>) => rangeOf({ headers } as IncomingMessage, bytes);

describe('rangeOf (the Range header of a download)', () => {
  it('serves the whole file without a Range header', () => {
    expect(range({})).toBeNull();
  });

  it('reads start-end, an open end, and a suffix, clamped to the file', () => {
    expect(range({ range: 'bytes=0-99' })).toEqual({ start: 0, end: 99 });
    expect(range({ range: 'bytes=900-' })).toEqual({ start: 900, end: 999 });
    expect(range({ range: 'bytes=-100' })).toEqual({ start: 900, end: 999 });
    expect(range({ range: 'bytes=-5000' })).toEqual({ start: 0, end: 999 });
    expect(range({ range: 'bytes=500-5000' })).toEqual({ start: 500, end: 999 });
  });

  it('clamps a suffix longer than the file to the whole file, also among several ranges', () => {
    expect(range({ range: 'bytes=-1000' })).toEqual({ start: 0, end: 999 });
    expect(range({ range: 'bytes=-99999999999999999999' })).toEqual({ start: 0, end: 999 });
    expect(range({ range: 'bytes=0-9,-5000' })).toEqual({ start: 0, end: 999 });
  });

  it('merges overlapping and adjacent ranges into one, and drops the ones past the end', () => {
    expect(range({ range: 'bytes=0-5,3-9' })).toEqual({ start: 0, end: 9 });
    expect(range({ range: 'bytes=10-19, 0-9' })).toEqual({ start: 0, end: 19 });
    expect(range({ range: 'bytes=0-9,2000-3000' })).toEqual({ start: 0, end: 9 });
  });

  it('reads the unit case-insensitively', () => {
    expect(range({ range: 'BYTES=0-9' })).toEqual({ start: 0, end: 9 });
  });

  it('answers unsatisfiable when no range names a byte of the file: past the end, an empty suffix, backwards', () => {
    for (const header of ['bytes=1000-', 'bytes=-0', 'bytes=10-5', 'bytes=1000-,10-5']) {
      expect(range({ range: header }), header).toBe('unsatisfiable');
    }
  });

  it('serves the whole file for ranges that stay several, other units and bad syntax', () => {
    for (const header of ['bytes=0-1,5-6', 'bytes=0-0,-1', 'items=0-1', 'bytes=-', 'bytes=a-b', 'bytes=1e2-', 'bytes=0x10-', 'bytes=']) {
      expect(range({ range: header }), header).toBeNull();
    }
  });

  it('honours If-Range only when it names this version, by ETag or date', () => {
    expect(range({ range: 'bytes=0-9', 'if-range': '"abc"' })).toEqual({ start: 0, end: 9 });
    expect(range({ range: 'bytes=0-9', 'if-range': modifiedAt.toUTCString() })).toEqual({ start: 0, end: 9 });
    expect(range({ range: 'bytes=0-9', 'if-range': '"stale"' })).toBeNull();
  });
});
