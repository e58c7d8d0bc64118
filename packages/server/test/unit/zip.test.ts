import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueNames, zipArchive } from '../../src/archives/zip.js';

let dir: string;
let stored: string;
const BYTES = Buffer.from('one stored file');

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-zip-'));
  stored = path.join(dir, 'take.wav');
  await writeFile(stored, BYTES);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The ZIP64 end of central directory record's signature. */
const ZIP64_EOCD = Buffer.from([0x50, 0x4b, 0x06, 0x06]);

describe('zipArchive', () => {
  it('writes a plain ZIP, without ZIP64 records, for a few small entries', async () => {
    const archive = zipArchive([{ name: 'a.wav', read: async () => createReadStream(stored), size: BYTES.length, modifiedAt: new Date() }]);
    const bytes = await buffer(archive.open());
    expect(bytes.length).toBe(archive.size);
    expect(bytes.includes(ZIP64_EOCD)).toBe(false);
  });

  it('fails its stream when a file is shorter than its record says', async () => {
    const archive = zipArchive([{ name: 'a.wav', read: async () => createReadStream(stored), size: BYTES.length + 1, modifiedAt: new Date() }]);
    await expect(buffer(archive.open())).rejects.toThrow(/unexpected number of bytes/);
  });
});

describe('uniqueNames', () => {
  it('makes every name a safe entry name: no drive prefix, no .. segment, no separators, control or bidi characters', () => {
    expect(uniqueNames(['C:x.wav', 'c:\\x.wav', '..', '...', '..\\evil.wav', '/etc/passwd', 'a\u0001b\u009F.wav', 'x\u202Ey\u2066z\u200F.wav', '', 'a|b?*"<>.wav'])).toEqual([
      'C_x.wav',
      'c__x.wav',
      '_',
      '_ (2)',
      '.._evil.wav',
      '_etc_passwd',
      'ab.wav',
      'xyz.wav',
      '_ (3)',
      'a_b_____.wav',
    ]);
  });

  it('numbers repeats before the extension, case-insensitively, around names that already carry a number', () => {
    expect(uniqueNames(['a.wav', 'A.wav', 'a (2).wav', 'a.wav', 'b', 'b', 'x/y.wav', '.hidden', '.hidden'])).toEqual([
      'a.wav',
      'A (2).wav',
      'a (2) (2).wav',
      'a (3).wav',
      'b',
      'b (2)',
      'x_y.wav',
      '.hidden',
      '.hidden (2)',
    ]);
  });
});
