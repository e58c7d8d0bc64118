// Sets a preview's presented duration to its exact number of frames. mediabunny writes the edit list's duration
// (and the movie's and the track's) as the span of every encoded packet, which runs on past the last sample to
// the end of the encoder's last frame (up to 1023 frames of padding); the media's own duration (mdhd) stays
// as it is, the edit list being what trims it. The index is at the file's start (faststart), after `ftyp`, so
// only its first bytes are read and patched in place.
import { open } from 'node:fs/promises';

/** The ftyp and moov headers, then the whole moov, are read; the moov of a 10-hour preview is about 2 MB. */
const MAX_MOOV_BYTES = 16 * 1024 * 1024;

export async function setExactDuration(file: string, frames: number, sampleRate: number): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    const moov = await findTopLevel(handle, 'moov');
    if (!moov || moov.size > MAX_MOOV_BYTES) throw new Error('the preview has no index at its start');
    const bytes = Buffer.alloc(moov.size);
    await handle.read(bytes, 0, moov.size, moov.start);
    const mvhd = findBox(bytes, 8, bytes.length, ['mvhd']);
    if (!mvhd) throw new Error('the preview has no movie header');
    // mvhd: version, flags, then the times and the timescale; v1 uses 64-bit times.
    const v1 = bytes[mvhd.body] === 1;
    const timescale = bytes.readUInt32BE(mvhd.body + (v1 ? 20 : 12));
    const duration = Math.round((frames * timescale) / sampleRate);
    writeTime(bytes, mvhd.body + (v1 ? 24 : 16), v1, duration);
    const tkhd = findBox(bytes, 8, bytes.length, ['trak', 'tkhd']);
    if (tkhd) writeTime(bytes, tkhd.body + (bytes[tkhd.body] === 1 ? 28 : 20), bytes[tkhd.body] === 1, duration);
    const elst = findBox(bytes, 8, bytes.length, ['trak', 'edts', 'elst']);
    // One entry: its segment duration, in the movie's timescale.
    if (elst && bytes.readUInt32BE(elst.body + 4) === 1) writeTime(bytes, elst.body + 8, bytes[elst.body] === 1, duration);
    await handle.write(bytes, 0, bytes.length, moov.start);
  } finally {
    await handle.close();
  }
}

function writeTime(bytes: Buffer, at: number, wide: boolean, value: number): void {
  if (wide) bytes.writeBigUInt64BE(BigInt(value), at);
  else bytes.writeUInt32BE(value, at);
}

async function findTopLevel(handle: import('node:fs/promises').FileHandle, type: string): Promise<{ start: number; size: number } | null> {
  const header = Buffer.alloc(16);
  for (let at = 0, boxes = 0; boxes < 16; boxes++) {
    const { bytesRead } = await handle.read(header, 0, 16, at);
    if (bytesRead < 8) return null;
    let size = header.readUInt32BE(0);
    if (size === 1) size = Number(header.readBigUInt64BE(8));
    if (size < 8) return null;
    if (header.toString('latin1', 4, 8) === type) return { start: at, size };
    at += size;
  }
  return null;
}

/** The box at `path` (nested types) within bytes[start, end): where its body begins. */
function findBox(bytes: Buffer, start: number, end: number, path: string[]): { body: number } | null {
  for (let at = start; at + 8 <= end; ) {
    const size = bytes.readUInt32BE(at);
    if (size < 8 || at + size > end) return null;
    if (bytes.toString('latin1', at + 4, at + 8) === path[0]) {
      return path.length === 1 ? { body: at + 8 } : findBox(bytes, at + 8, at + size, path.slice(1));
    }
    at += size;
  }
  return null;
}
