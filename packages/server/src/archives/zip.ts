import type { Readable } from 'node:stream';
import { ZipFile } from 'yazl';

/** One stored file, or bytes made for the answer (a marker export's project file), as an entry of an archive. */
export type ArchiveEntry = {
  /** The name inside the archive. */
  name: string;
  modifiedAt: Date;
} & ({ /** Opens the stored bytes (core/store). */ read: () => Promise<Readable>; size: number } | { bytes: Buffer });

/** A ZIP whose length is known before its first byte. */
export interface ZipArchive {
  size: number;
  /** Starts reading the stored files, one at a time, into the ZIP's bytes; call at most once. */
  open(): Readable;
}

/** `-rw-r--r--`: extracted files are the recipient's, whatever mode they have on the server. */
const ENTRY_MODE = 0o100644;

/**
 * A stored (uncompressed) ZIP of `entries`, in their order: audio does not shrink, and stored entries let
 * yazl compute the exact length up front (ZIP64 records where 4 GiB or 65,535 entries are passed). No
 * stored file is opened until `open()`, so a HEAD costs no file handles; then each file is read once,
 * straight into the output, with backpressure (no temporary copy, flat memory).
 */
export function zipArchive(entries: ArchiveEntry[]): ZipArchive {
  const zip = new ZipFile();
  let startReading!: () => void;
  const reading = new Promise<void>((resolve) => (startReading = resolve));
  const opened = new Set<Readable>();
  const output = zip.outputStream as Readable;
  for (const entry of entries) {
    if ('bytes' in entry) {
      // yazl takes a buffer's size from the buffer itself (and refuses a `size` option for it).
      zip.addBuffer(entry.bytes, entry.name, { mtime: entry.modifiedAt, mode: ENTRY_MODE, compress: false });
      continue;
    }
    const { read } = entry;
    const options = { size: entry.size, mtime: entry.modifiedAt, mode: ENTRY_MODE, compress: false };
    zip.addReadStreamLazy(entry.name, options, (callback) => {
      void reading.then(read).then(
        (stream) => {
          opened.add(stream);
          // yazl pipes the stream without listening for its errors: a vanished file fails the archive.
          stream.once('error', (error) => zip.emit('error', error));
          stream.once('close', () => opened.delete(stream));
          callback(null, stream);
        },
        (error: Error) => zip.emit('error', error),
      );
    });
  }
  // A short file, a missing one: the output ends in an error instead of a ZIP that lies about its entries.
  zip.on('error', (error: Error) => output.destroy(error));
  // A reader that goes away leaves no file open behind it.
  output.once('close', () => {
    for (const stream of opened) stream.destroy();
  });
  let size: number | undefined;
  // yazl hands the computed size to the callback (its typings declare none); with every size given and no
  // compression it is known at once, before end() returns.
  const end = zip.end.bind(zip) as (options: object, callback: (calculated: number) => void) => void;
  end({}, (calculated) => (size = calculated));
  if (size === undefined || size < 0) throw new Error('the ZIP size could not be computed in advance');
  let openedOnce = false;
  return {
    size,
    open() {
      if (openedOnce) throw new Error('a ZIP archive is read once');
      openedOnce = true;
      startReading();
      return output;
    },
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
