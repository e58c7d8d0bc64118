// A stored (uncompressed) ZIP writer: audio does not shrink, and stored entries make the archive's exact
// length known before its first byte. Written here rather than with yazl because yazl copies each chunk
// through three streams of its own and never says when it is done with one; here each entry's bytes are read
// into the response's few reused buffers (core/response-writer.ts, as a plain download is), a CRC-32 over
// them on the way, so the archive moves at a plain download's pace with flat memory. The records are byte for
// byte what yazl 3 writes (UTF-8 names, data descriptors, the Info-ZIP timestamp, ZIP64 where 4 GiB or 65,535
// entries are passed): test/unit/zip.test.ts compares them.
import { crc32 } from '@node-rs/crc32';
import type { ResponseWriter } from '../core/response-writer.js';
import type { BlobReader } from '../core/store/index.js';

/** One stored file, or bytes made for the answer (a marker export's project file), as an entry of an archive. */
export type ArchiveEntry = {
  /** The name inside the archive. */
  name: string;
  modifiedAt: Date;
} & (
  | {
      size: number;
      /** The stored bytes, opened when the archive reaches the entry (a HEAD opens nothing; one entry is open at a time). */
      open: () => Promise<BlobReader>;
    }
  | { bytes: Buffer }
);

/** A ZIP whose length is known before its first byte. */
export interface ZipArchive {
  size: number;
  /** Reads the stored files, one at a time, into the ZIP's bytes through `writer`; call at most once. */
  write(writer: ResponseWriter): Promise<void>;
}

/** `-rw-r--r--`: extracted files are the recipient's, whatever mode they have on the server. */
const ENTRY_MODE = 0o100644;
/** Unix (3), APPNOTE 6.3 (63): what yazl writes. */
const VERSION_MADE_BY = (3 << 8) | 63;
const VERSION_NEEDED_UTF8 = 20;
const VERSION_NEEDED_ZIP64 = 45;
const NAME_IS_UTF8 = 1 << 11;
const SIZES_IN_DATA_DESCRIPTOR = 1 << 3;
const LOCAL_HEADER_SIZE = 30;
const DATA_DESCRIPTOR_SIZE = 16;
const ZIP64_DATA_DESCRIPTOR_SIZE = 24;
const CENTRAL_RECORD_SIZE = 46;
const TIMESTAMP_FIELD_SIZE = 9;
const ZIP64_FIELD_SIZE = 28;
const EOCD_SIZE = 22;
const ZIP64_EOCD_SIZE = 56;
const ZIP64_LOCATOR_SIZE = 20;
/** Past this a size or an offset needs its ZIP64 field (yazl's bound: 0xffffffff itself marks "in ZIP64"). */
const MAX_32 = 0xfffffffe;

interface PlannedEntry {
  name: Buffer;
  offset: number;
  size: number;
  zip64: boolean;
  dosTime: number;
  dosDate: number;
  unixTime: number;
  /** Known up front for made bytes; found while a stored file is read. */
  crc: number;
  source: { bytes: Buffer } | { open: () => Promise<BlobReader> };
}

/**
 * A stored ZIP of `entries`, in their order. No stored file is opened until `write()`, so a HEAD costs no
 * file handles; then each file is read once, straight into the output, with backpressure (no temporary copy).
 * An entry whose bytes end early, or go on past its size, fails the write instead of a ZIP that lies about
 * its entries.
 */
export function zipArchive(entries: ArchiveEntry[]): ZipArchive {
  let offset = 0;
  const planned = entries.map((entry): PlannedEntry => {
    const name = Buffer.from(checkedName(entry.name), 'utf8');
    const size = 'bytes' in entry ? entry.bytes.length : entry.size;
    const zip64 = size > MAX_32 || offset > MAX_32;
    const source = 'bytes' in entry ? { bytes: entry.bytes } : { open: entry.open };
    const { dosTime, dosDate } = dosDateTime(entry.modifiedAt);
    const unixTime = Math.min(0x7fffffff, Math.max(-0x80000000, Math.floor(entry.modifiedAt.getTime() / 1000)));
    const crc = 'bytes' in entry ? crc32(entry.bytes) : 0;
    const planned = { name, offset, size, zip64, dosTime, dosDate, unixTime, crc, source };
    offset += LOCAL_HEADER_SIZE + name.length + size + ('bytes' in source ? 0 : zip64 ? ZIP64_DATA_DESCRIPTOR_SIZE : DATA_DESCRIPTOR_SIZE);
    return planned;
  });
  const directoryOffset = offset;
  const directorySize = planned.reduce((sum, entry) => sum + CENTRAL_RECORD_SIZE + entry.name.length + TIMESTAMP_FIELD_SIZE + (entry.zip64 ? ZIP64_FIELD_SIZE : 0), 0);
  const zip64End = planned.length >= 0xffff || directorySize >= 0xffffffff || directoryOffset >= 0xffffffff;
  const size = directoryOffset + directorySize + (zip64End ? ZIP64_EOCD_SIZE + ZIP64_LOCATOR_SIZE : 0) + EOCD_SIZE;
  let written = false;
  return {
    size,
    write(writer) {
      if (written) throw new Error('a ZIP archive is written once');
      written = true;
      return writeZip(writer, planned, { directoryOffset, directorySize, zip64End });
    },
  };
}

async function writeZip(writer: ResponseWriter, entries: PlannedEntry[], end: { directoryOffset: number; directorySize: number; zip64End: boolean }): Promise<void> {
  /** One byte past an entry's size: its stored bytes must end there. */
  const pastEnd = Buffer.alloc(1);
  for (const entry of entries) {
    if (writer.closed) return;
    writer.write(localHeader(entry));
    if ('bytes' in entry.source) {
      writer.write(entry.source.bytes);
      continue;
    }
    const reader = await entry.source.open();
    try {
      let crc = 0;
      await writer.copy(reader, entry.size, (chunk) => {
        crc = crc32(chunk, crc);
      });
      if (writer.closed) return;
      if ((await reader.read(pastEnd)) > 0) throw new Error(`the stored bytes of ${entry.name.toString()} go on past the ${entry.size} bytes its record names`);
      entry.crc = crc;
    } finally {
      await reader.close();
    }
    writer.write(dataDescriptor(entry));
  }
  writer.write(Buffer.concat(entries.map(centralRecord)));
  writer.write(endRecords(entries.length, end));
}

function localHeader(entry: PlannedEntry): Buffer {
  const made = 'bytes' in entry.source;
  const header = Buffer.alloc(LOCAL_HEADER_SIZE + entry.name.length);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(VERSION_NEEDED_UTF8, 4);
  header.writeUInt16LE(made ? NAME_IS_UTF8 : NAME_IS_UTF8 | SIZES_IN_DATA_DESCRIPTOR, 6);
  header.writeUInt16LE(0, 8); // stored
  header.writeUInt16LE(entry.dosTime, 10);
  header.writeUInt16LE(entry.dosDate, 12);
  // With a data descriptor, the CRC and the sizes follow the bytes; here they are zero.
  header.writeUInt32LE(made ? entry.crc : 0, 14);
  header.writeUInt32LE(made ? entry.size : 0, 18);
  header.writeUInt32LE(made ? entry.size : 0, 22);
  header.writeUInt16LE(entry.name.length, 26);
  header.writeUInt16LE(0, 28);
  entry.name.copy(header, LOCAL_HEADER_SIZE);
  return header;
}

function dataDescriptor(entry: PlannedEntry): Buffer {
  const descriptor = Buffer.alloc(entry.zip64 ? ZIP64_DATA_DESCRIPTOR_SIZE : DATA_DESCRIPTOR_SIZE);
  descriptor.writeUInt32LE(0x08074b50, 0);
  descriptor.writeUInt32LE(entry.crc, 4);
  if (entry.zip64) {
    descriptor.writeBigUInt64LE(BigInt(entry.size), 8);
    descriptor.writeBigUInt64LE(BigInt(entry.size), 16);
  } else {
    descriptor.writeUInt32LE(entry.size, 8);
    descriptor.writeUInt32LE(entry.size, 12);
  }
  return descriptor;
}

function centralRecord(entry: PlannedEntry): Buffer {
  const made = 'bytes' in entry.source;
  const record = Buffer.alloc(CENTRAL_RECORD_SIZE + entry.name.length + TIMESTAMP_FIELD_SIZE + (entry.zip64 ? ZIP64_FIELD_SIZE : 0));
  record.writeUInt32LE(0x02014b50, 0);
  record.writeUInt16LE(VERSION_MADE_BY, 4);
  record.writeUInt16LE(entry.zip64 ? VERSION_NEEDED_ZIP64 : VERSION_NEEDED_UTF8, 6);
  record.writeUInt16LE(made ? NAME_IS_UTF8 : NAME_IS_UTF8 | SIZES_IN_DATA_DESCRIPTOR, 8);
  record.writeUInt16LE(0, 10); // stored
  record.writeUInt16LE(entry.dosTime, 12);
  record.writeUInt16LE(entry.dosDate, 14);
  record.writeUInt32LE(entry.crc, 16);
  record.writeUInt32LE(entry.zip64 ? 0xffffffff : entry.size, 20);
  record.writeUInt32LE(entry.zip64 ? 0xffffffff : entry.size, 24);
  record.writeUInt16LE(entry.name.length, 28);
  record.writeUInt16LE(TIMESTAMP_FIELD_SIZE + (entry.zip64 ? ZIP64_FIELD_SIZE : 0), 30);
  // Comment length, disk number, internal attributes: 0.
  record.writeUInt32LE((ENTRY_MODE << 16) >>> 0, 38);
  record.writeUInt32LE(entry.zip64 ? 0xffffffff : entry.offset, 42);
  let at = entry.name.copy(record, CENTRAL_RECORD_SIZE) + CENTRAL_RECORD_SIZE;
  // Info-ZIP's universal timestamp: the modification time in UTC seconds, which a DOS time cannot carry. The
  // access-time flag is set without the field, as Info-ZIP writes it in a central record.
  at = record.writeUInt16LE(0x5455, at);
  at = record.writeUInt16LE(TIMESTAMP_FIELD_SIZE - 4, at);
  at = record.writeUInt8(0b11, at);
  at = record.writeInt32LE(entry.unixTime, at);
  if (entry.zip64) {
    at = record.writeUInt16LE(0x0001, at);
    at = record.writeUInt16LE(ZIP64_FIELD_SIZE - 4, at);
    at = record.writeBigUInt64LE(BigInt(entry.size), at);
    at = record.writeBigUInt64LE(BigInt(entry.size), at);
    record.writeBigUInt64LE(BigInt(entry.offset), at);
  }
  return record;
}

function endRecords(count: number, { directoryOffset, directorySize, zip64End }: { directoryOffset: number; directorySize: number; zip64End: boolean }): Buffer {
  const eocd = Buffer.alloc(EOCD_SIZE);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(Math.min(count, 0xffff), 8);
  eocd.writeUInt16LE(Math.min(count, 0xffff), 10);
  eocd.writeUInt32LE(Math.min(directorySize, 0xffffffff), 12);
  eocd.writeUInt32LE(Math.min(directoryOffset, 0xffffffff), 16);
  if (!zip64End) return eocd;
  const record = Buffer.alloc(ZIP64_EOCD_SIZE + ZIP64_LOCATOR_SIZE);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(BigInt(ZIP64_EOCD_SIZE - 12), 4);
  record.writeUInt16LE(VERSION_MADE_BY, 12);
  record.writeUInt16LE(VERSION_NEEDED_ZIP64, 14);
  // Disk numbers (16, 20): 0.
  record.writeBigUInt64LE(BigInt(count), 24);
  record.writeBigUInt64LE(BigInt(count), 32);
  record.writeBigUInt64LE(BigInt(directorySize), 40);
  record.writeBigUInt64LE(BigInt(directoryOffset), 48);
  const locator = ZIP64_EOCD_SIZE;
  record.writeUInt32LE(0x07064b50, locator);
  record.writeBigUInt64LE(BigInt(directoryOffset + directorySize), locator + 8);
  record.writeUInt32LE(1, locator + 16);
  return Buffer.concat([record, eocd]);
}

/** What yazl refused: an empty name, an absolute one, a `..` segment (entryName never makes one). */
function checkedName(name: string): string {
  const slashed = name.replace(/\\/g, '/');
  if (slashed === '' || /^[a-zA-Z]:/.test(slashed) || slashed.startsWith('/') || slashed.split('/').includes('..') || slashed.endsWith('/')) {
    throw new Error(`not a ZIP entry name: ${JSON.stringify(name)}`);
  }
  return slashed;
}

/** MS-DOS date and time in the server's time zone, as extractors read them; clamped to 1980–2107 as yazl does. */
function dosDateTime(given: Date): { dosDate: number; dosTime: number } {
  const earliest = new Date(1980, 0, 1);
  const latest = new Date(2107, 11, 31, 23, 59, 58);
  const date = given < earliest ? earliest : given > latest ? latest : given;
  return {
    dosDate: date.getDate() | ((date.getMonth() + 1) << 5) | ((date.getFullYear() - 1980) << 9),
    dosTime: Math.floor(date.getSeconds() / 2) | (date.getMinutes() << 5) | (date.getHours() << 11),
  };
}

/**
 * Characters an entry name must not carry, each made `_`: path separators; `:` (a drive prefix, which yazl
 * refuses as an absolute path, or an NTFS stream) and the rest Windows forbids in a name.
 */
const UNSAFE_IN_ENTRY_NAME = /[/\\:*?"<>|]/g;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;
/** Bidirectional controls: `take<U+202E>vaw.exe` shows as `takeexe.wav` in a file manager. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A display name as a safe ZIP entry name: one plain file name that extracts where the archive is unpacked,
 * whatever the name holds. Never throws and never answers a name yazl refuses (empty, absolute, `..`).
 */
export function entryName(given: string): string {
  const name = given.replace(CONTROL_CHARACTERS, '').replace(BIDI_CONTROLS, '').replace(UNSAFE_IN_ENTRY_NAME, '_');
  return name === '' || /^\.+$/.test(name) ? '_' : name;
}

/**
 * `take.wav`, `take (2).wav`, `take (3).wav`…: display names repeat in a cut, entry names must not (compared
 * case-insensitively, as Windows and macOS extract them). Each is made safe first (entryName).
 */
export function uniqueNames(names: string[]): string[] {
  const taken = new Set<string>();
  // The next number to try per name, so thousands of one name stay linear.
  const nextNumber = new Map<string, number>();
  return names.map((given) => {
    const name = entryName(given);
    const key = name.toLowerCase();
    const dot = name.lastIndexOf('.');
    const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
    let candidate = name;
    let n = nextNumber.get(key) ?? 2;
    while (taken.has(candidate.toLowerCase())) candidate = `${stem} (${n++})${extension}`;
    nextNumber.set(key, n);
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}
