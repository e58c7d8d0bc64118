// Hostile inputs for the analysis, built here byte by byte: each is small on disk and costly to decode.
import yazl from 'yazl';

const FLAC_BLOCK = 65535;
const FLAC_CHANNELS = 8;

/**
 * A FLAC of `frames` frames of digital silence, each 65,535 samples on 8 channels coded as constant
 * subframes: about 35 bytes decode to 2 MiB of float samples. `declaredSamples` goes into STREAMINFO's
 * total (0: unknown, as an encoder that could not seek back writes it).
 */
export function flacBomb(frames: number, declaredSamples: number): Buffer {
  const streamInfo = Buffer.alloc(34);
  streamInfo.writeUInt16BE(FLAC_BLOCK, 0);
  streamInfo.writeUInt16BE(FLAC_BLOCK, 2);
  // Sample rate (20 bits) 48,000, channels - 1 (3 bits), bits per sample - 1 (5 bits), total samples (36 bits).
  const packed = (48000n << 44n) | (BigInt(FLAC_CHANNELS - 1) << 41n) | (15n << 36n) | BigInt(declaredSamples);
  streamInfo.writeBigUInt64BE(packed, 10);
  const parts: Buffer[] = [Buffer.from('fLaC', 'latin1'), Buffer.from([0x80, 0, 0, 34]), streamInfo];
  for (let frame = 0; frame < frames; frame += 1) parts.push(silentFlacFrame(frame));
  return Buffer.concat(parts);
}

function silentFlacFrame(number: number): Buffer {
  // Fixed block size; block size from the 16 bits after the frame number (0x7_), 48 kHz (0x_A);
  // 8 independent channels (0x7_), 16 bits per sample (0x_8).
  const header = Buffer.concat([Buffer.from([0xff, 0xf8, 0x7a, 0x78]), utf8Number(number), Buffer.from([(FLAC_BLOCK - 1) >> 8, (FLAC_BLOCK - 1) & 0xff])]);
  const withCrc8 = Buffer.concat([header, Buffer.from([crc8(header)])]);
  // Each subframe: type "constant" (0x00), then the one 16-bit sample value.
  const body = Buffer.concat([withCrc8, Buffer.alloc(FLAC_CHANNELS * 3)]);
  const crc = Buffer.alloc(2);
  crc.writeUInt16BE(crc16(body));
  return Buffer.concat([body, crc]);
}

/** FLAC's frame number, coded like UTF-8 (up to 16 bits here). */
function utf8Number(value: number): Buffer {
  if (value < 0x80) return Buffer.from([value]);
  if (value < 0x800) return Buffer.from([0xc0 | (value >> 6), 0x80 | (value & 0x3f)]);
  return Buffer.from([0xe0 | (value >> 12), 0x80 | ((value >> 6) & 0x3f), 0x80 | (value & 0x3f)]);
}

function crc8(bytes: Buffer): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  return crc;
}

function crc16(bytes: Buffer): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x8005) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** An M4A that is only `count` empty top-level boxes (8 bytes each) after its ftyp. */
export function emptyBoxesM4a(count: number): Buffer {
  const ftyp = Buffer.from('\x00\x00\x00\x14ftypM4A \x00\x00\x02\x00M4A ', 'latin1');
  const boxes = Buffer.alloc(count * 8);
  for (let at = 0; at < boxes.length; at += 8) {
    boxes.writeUInt32BE(8, at);
    boxes.write('free', at + 4, 'latin1');
  }
  return Buffer.concat([ftyp, boxes]);
}

/** A deflated ZIP of in-memory entries; `\0` in a name stays a NUL byte (yazl would refuse it). */
export async function zipBuffer(entries: Record<string, Buffer>): Promise<Buffer> {
  const placeholders = new Map<string, string>();
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(entries)) {
    const stored = name.replaceAll('\0', '~');
    placeholders.set(stored, name);
    zip.addBuffer(content, stored);
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  // The name is stored twice (local header, central directory); same length, so every offset holds.
  for (const [stored, name] of placeholders) {
    if (stored === name) continue;
    const from = Buffer.from(stored, 'latin1');
    const to = Buffer.from(name, 'latin1');
    for (let at = bytes.indexOf(from); at >= 0; at = bytes.indexOf(from, at + 1)) to.copy(bytes, at);
  }
  return bytes;
}
