import { describe, expect, it } from 'vitest';
import { WavHeaderReader } from '../../src/analysis/wav.js';

/** RIFF/WAVE with `emptyChunks` zero-size chunks before "fmt " and "data" (16-bit stereo 48 kHz). */
function header(emptyChunks: number): Buffer {
  const riff = Buffer.from('RIFF\0\0\0\0WAVE', 'latin1');
  const empty = Buffer.alloc(8 * emptyChunks);
  for (let i = 0; i < emptyChunks; i += 1) empty.write('junk', i * 8, 'latin1');
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'latin1');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8);
  fmt.writeUInt16LE(2, 10);
  fmt.writeUInt32LE(48_000, 12);
  fmt.writeUInt32LE(192_000, 16);
  fmt.writeUInt16LE(4, 20);
  fmt.writeUInt16LE(16, 22);
  const data = Buffer.from('data\x10\0\0\0', 'latin1');
  return Buffer.concat([riff, empty, fmt, data]);
}

const FORMAT = { float: false, bitDepth: 16, channels: 2, sampleRate: 48_000, dataBytes: 16 };

/** Pushes `bytes` in pieces of `size`; the first answer, and the number of pieces it took. */
function readInPieces(bytes: Buffer, size: number): { parsed: ReturnType<WavHeaderReader['push']>; pieces: number } {
  const reader = new WavHeaderReader();
  for (let start = 0, pieces = 1; start < bytes.length; start += size, pieces += 1) {
    const parsed = reader.push(bytes.subarray(start, start + size));
    if (parsed) return { parsed, pieces };
  }
  return { parsed: null, pieces: Math.ceil(bytes.length / size) };
}

describe('WavHeaderReader', () => {
  it('reads a header in one piece or in pieces that split every chunk header, and hands over the samples after it', () => {
    const samples = Buffer.from('0123456789abcdef', 'latin1');
    const head = header(1000);
    const whole = Buffer.concat([head, samples]);
    expect(readInPieces(whole, whole.length).parsed).toEqual({ format: FORMAT, samples });
    for (const size of [1, 7, 4096]) {
      const { parsed } = readInPieces(whole, size);
      expect(parsed?.format).toEqual(FORMAT);
      // The rest of the piece where the header ended: the first sample bytes.
      expect(parsed!.samples).toEqual(whole.subarray(head.length, head.length + parsed!.samples.length));
    }
  });

  it('skips a large chunk before "data" without keeping it, and refuses a header longer than 1 MiB', () => {
    const list = Buffer.alloc(8 + 900_000);
    list.write('LIST', 0, 'latin1');
    list.writeUInt32LE(900_000, 4);
    const withList = header(0);
    const bytes = Buffer.concat([withList.subarray(0, 12), list, withList.subarray(12)]);
    expect(readInPieces(bytes, 16 * 1024).parsed?.format).toEqual(FORMAT);
    expect(() => readInPieces(Buffer.concat([header(0).subarray(0, 12), Buffer.alloc(1 << 20)]), 16 * 1024)).toThrow('no "data" chunk');
  });

  it('refuses what is not RIFF/WAVE, and a "data" chunk before its "fmt "', () => {
    expect(() => new WavHeaderReader().push(Buffer.from('RIFX\0\0\0\0WAVE', 'latin1'))).toThrow('not a RIFF/WAVE file');
    expect(() => readInPieces(Buffer.from('RIFF\0\0\0\0WAVEdata\0\0\0\0', 'latin1'), 3)).toThrow('comes before its "fmt " chunk');
  });
});
