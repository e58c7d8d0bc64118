import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZipFile } from 'yazl';
import { uniqueNames, zipArchive } from '../../src/archives/zip.js';
import { streamReader } from '../../src/core/store/stream-reader.js';
import { readZip, writtenZip } from '../support/zip.js';

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

/** The same entries through yazl 3 (the writer the archives used before): the records must not change. */
function yazlBytes(entries: { name: string; modifiedAt: Date; bytes: Buffer; made: boolean }[]): Promise<Buffer> {
  const zip = new ZipFile();
  for (const entry of entries) {
    const options = { mtime: entry.modifiedAt, mode: 0o100644, compress: false };
    if (entry.made) zip.addBuffer(entry.bytes, entry.name, options);
    else zip.addReadStreamLazy(entry.name, { ...options, size: entry.bytes.length }, (callback) => callback(null, Readable.from([entry.bytes])));
  }
  zip.end();
  return buffer(zip.outputStream as Readable);
}

describe('zipArchive', () => {
  it('writes the bytes yazl wrote: UTF-8 names, data descriptors, timestamps, a made entry among stored ones', async () => {
    const entries = [
      { name: 'Take (v2) – ünïcode.RPP', modifiedAt: new Date('2026-03-01T12:34:56.789Z'), bytes: Buffer.from('<REAPER_PROJECT>'), made: true },
      { name: 'drums.wav', modifiedAt: new Date('1975-01-01T00:00:00Z'), bytes: Buffer.alloc(70_000, 7), made: false },
      { name: 'bass.wav', modifiedAt: new Date('2031-12-31T23:59:59Z'), bytes: Buffer.from('RIFF'), made: false },
    ];
    const archive = zipArchive(
      entries.map(({ name, modifiedAt, bytes, made }) =>
        made ? { name, modifiedAt, bytes } : { name, modifiedAt, size: bytes.length, open: async () => streamReader(Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)])) },
      ),
    );
    const ours = await writtenZip(archive);
    expect(ours.length).toBe(archive.size);
    expect(ours.equals(await yazlBytes(entries))).toBe(true);
  });

  it('knows its size in advance when the central directory passes 64 KiB (1,000 entries)', async () => {
    const names = uniqueNames(Array.from({ length: 1000 }, () => 'a take with a long name, as people name them.wav'));
    const archive = zipArchive(names.map((name) => ({ name, size: BYTES.length, open: async () => streamReader(Readable.from([BYTES])), modifiedAt: new Date() })));
    const bytes = await writtenZip(archive);
    expect(bytes.length).toBe(archive.size);
    expect((await readZip(bytes)).entryCount).toBe(1000);
  });

  it('writes a plain ZIP, without ZIP64 records, for a few small entries', async () => {
    const archive = zipArchive([{ name: 'a.wav', size: BYTES.length, open: async () => streamReader(createReadStream(stored)), modifiedAt: new Date() }]);
    const bytes = await writtenZip(archive);
    expect(bytes.length).toBe(archive.size);
    expect(bytes.includes(ZIP64_EOCD)).toBe(false);
  });

  it('fails its write when a file is shorter or longer than its record says', async () => {
    const short = zipArchive([{ name: 'a.wav', size: BYTES.length + 1, open: async () => streamReader(createReadStream(stored)), modifiedAt: new Date() }]);
    await expect(writtenZip(short)).rejects.toThrow(/end at byte 15, before the 16/);
    const long = zipArchive([{ name: 'a.wav', size: BYTES.length - 1, open: async () => streamReader(createReadStream(stored)), modifiedAt: new Date() }]);
    await expect(writtenZip(long)).rejects.toThrow(/a\.wav go on past the 14 bytes/);
  });

  it('reads every entry into the same three lent buffers, each read into again only after the sink took its bytes', async () => {
    // 8 entries of 512 KiB, each 2 reads of 256 KiB: the sink copies a chunk a turn after its write, so a
    // buffer refilled too early would change the bytes the sink copies.
    const files = Array.from({ length: 8 }, () => randomBytes(512 * 1024));
    const lent = new Set<ArrayBufferLike>();
    const entries = files.map((bytes, i) => ({
      name: `take-${i}.wav`,
      size: bytes.length,
      modifiedAt: new Date(),
      open: async () => {
        const reader = streamReader(Readable.from([bytes]));
        return { read: (buffer: Buffer) => (lent.add(buffer.buffer), reader.read(buffer)), close: () => reader.close() };
      },
    }));
    const { entries: read } = await readZip(await writtenZip(zipArchive(entries)));
    expect(read.map((entry, i) => entry.bytes.equals(files[i]!))).toEqual(files.map(() => true));
    // Three buffers of the writer and the one-byte probe of each entry's end.
    expect(lent.size).toBe(4);
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
