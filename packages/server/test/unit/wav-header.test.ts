import { describe, expect, it } from 'vitest';
import { type HeaderScan, parseWavHeader } from '../../src/analysis/wav.js';

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

describe('parseWavHeader', () => {
  it('reads a header that arrives in pieces, walking on from where it stopped, as it reads the whole', () => {
    const whole = header(1000);
    const expected = parseWavHeader(whole);
    expect(expected).toEqual({ format: { float: false, bitDepth: 16, channels: 2, sampleRate: 48_000, dataBytes: 16 }, dataOffset: whole.length });
    const scan: HeaderScan = { offset: 12, fmt: null };
    let parsed = null;
    // Pieces of 7 bytes split every chunk header, the "fmt " chunk and the "data" header somewhere.
    for (let end = 7; parsed === null && end <= whole.length + 7; end += 7) parsed = parseWavHeader(whole.subarray(0, Math.min(end, whole.length)), scan);
    expect(parsed).toEqual(expected);
    expect(scan.offset).toBe(whole.length - 8);
  });

  it('refuses what is not RIFF/WAVE, and a "data" chunk before its "fmt "', () => {
    expect(() => parseWavHeader(Buffer.from('RIFX\0\0\0\0WAVE', 'latin1'))).toThrow('not a RIFF/WAVE file');
    expect(() => parseWavHeader(Buffer.from('RIFF\0\0\0\0WAVEdata\0\0\0\0', 'latin1'))).toThrow('comes before its "fmt " chunk');
  });
});
