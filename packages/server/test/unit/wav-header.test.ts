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

  it('reads RF64 and BW64: the audio\'s size from "ds64", other 64-bit sizes from its table', () => {
    const riff = header(0);
    /** ds64 with the data size 5 GiB and a table entry giving "big " 3 bytes. */
    const ds64 = Buffer.alloc(8 + 28 + 12);
    ds64.write('ds64', 0, 'latin1');
    ds64.writeUInt32LE(28 + 12, 4);
    ds64.writeBigUInt64LE(5n * 2n ** 30n, 16);
    ds64.writeUInt32LE(1, 32);
    ds64.write('big ', 36, 'latin1');
    ds64.writeBigUInt64LE(3n, 40);
    const big = Buffer.from('big \xff\xff\xff\xffabc\0', 'latin1');
    const data = Buffer.from('data\xff\xff\xff\xff', 'latin1');
    for (const form of ['RF64', 'BW64']) {
      const head = Buffer.concat([Buffer.from(`${form}\xff\xff\xff\xffWAVE`, 'latin1'), ds64, big, riff.subarray(12, riff.length - 8), data]);
      for (const size of [1, 5, 4096]) expect(readInPieces(head, size).parsed?.format).toEqual({ ...FORMAT, dataBytes: 5 * 2 ** 30 });
    }
    const withoutDs64 = Buffer.concat([Buffer.from('RF64\xff\xff\xff\xffWAVE', 'latin1'), riff.subarray(12, riff.length - 8), data]);
    expect(() => readInPieces(withoutDs64, 4096)).toThrow('without its "ds64" chunk');
    // In a RIFF file 0xFFFFFFFF is a streamed file's unknown size, and a "ds64" chunk is any other chunk.
    const riffWithDs64 = Buffer.concat([riff.subarray(0, 12), ds64, riff.subarray(12, riff.length - 8), data]);
    expect(readInPieces(riffWithDs64, 4096).parsed?.format).toEqual({ ...FORMAT, dataBytes: null });
  });
});
