import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniqueNames, zipArchive } from '../src/archives/zip.js';
import { streamReader } from '../src/core/store/stream-reader.js';
import { readZip, writtenZip } from './support/zip.js';

// Not a unit test for its time: 65,536 stored files are opened one after another (about 70 s on a loaded
// 2-core machine), so it runs with the integration tests.

let dir: string;
let stored: string;
const BYTES = Buffer.from('one stored file');

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-zip64-'));
  stored = path.join(dir, 'take.wav');
  await writeFile(stored, BYTES);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The ZIP64 end of central directory record's signature. */
const ZIP64_EOCD = Buffer.from([0x50, 0x4b, 0x06, 0x06]);

// A 4.1 GiB archive is out of reach of the test machine's patience: ZIP64 is tested on its other path,
// 65,536 entries (past the 65,535 a plain end of central directory can count), every one the same small
// stored file, through the same code the archive route runs (names, precomputed size, streaming).
it('writes ZIP64 records past 65,535 entries, and its size in advance is the size written', async () => {
  const count = 65_536;
  const names = uniqueNames(Array.from({ length: count }, () => 'take.wav'));
  const modifiedAt = new Date('2026-11-21T10:00:00.000Z');
  const archive = zipArchive(names.map((name) => ({ name, size: BYTES.length, open: async () => streamReader(createReadStream(stored)), modifiedAt })));
  const bytes = await writtenZip(archive);
  expect(bytes.length).toBe(archive.size);
  expect(bytes.includes(ZIP64_EOCD)).toBe(true);
  const { entryCount, entries } = await readZip(bytes);
  expect(entryCount).toBe(count);
  expect(entries[0]!.name).toBe('take.wav');
  expect(entries[count - 1]!.name).toBe(`take (${count}).wav`);
  expect(entries.every((entry) => entry.bytes.equals(BYTES))).toBe(true);
}, 300_000);

