import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import yauzl from 'yauzl';
import yazl from 'yazl';
import type { ZipArchive } from '../../src/archives/zip.js';
import { ResponseWriter } from '../../src/core/response-writer.js';

export interface ReadEntry {
  name: string;
  bytes: Buffer;
  /** The CRC-32 the archive records for the entry. */
  crc32: number;
  /** 0: stored. */
  compressionMethod: number;
}

/** Every entry of a ZIP, read by yauzl (an independent reader: it checks sizes, offsets and ZIP64 records). */
export async function readZip(zipBytes: Buffer): Promise<{ entryCount: number; entries: ReadEntry[] }> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(zipBytes, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true }, (error, opened) => (error ? reject(error) : resolve(opened))),
  );
  const entries: ReadEntry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', reject);
        stream.on('end', () => {
          entries.push({ name: entry.fileName, bytes: Buffer.concat(chunks), crc32: entry.crc32, compressionMethod: entry.compressionMethod });
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
  return { entryCount: zip.entryCount, entries };
}

/** `unzip -t` (Info-ZIP): tests every entry's CRC; answers its exit code and output. */
export async function unzipTest(zipBytes: Buffer): Promise<{ code: number; output: string }> {
  const file = path.join(os.tmpdir(), `bandcollab-test-${process.pid}-${Math.random().toString(16).slice(2)}.zip`);
  await writeFile(file, zipBytes);
  try {
    const { stdout } = await promisify(execFile)('unzip', ['-t', file]);
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: `${failed.stdout}${failed.stderr}` };
  } finally {
    await rm(file, { force: true });
  }
}

/** A stored ZIP of `entries` (name, bytes), in their order, in memory. */
export async function zipOf(entries: Iterable<[string, Buffer]>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, bytes] of entries) zip.addBuffer(bytes, name, { compress: false });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The bytes `archive` writes, through a ResponseWriter into a sink that takes each chunk a turn of the event
 * loop later (as a socket does), copying it only then: a buffer read into again before its write's callback
 * would show in the bytes.
 */
export async function writtenZip(archive: ZipArchive): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      setImmediate(() => {
        chunks.push(Buffer.from(chunk));
        callback();
      });
    },
  });
  const finished = once(sink, 'finish');
  const writer = new ResponseWriter(sink);
  await archive.write(writer);
  await writer.end();
  await finished;
  return Buffer.concat(chunks);
}
