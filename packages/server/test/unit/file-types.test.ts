import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { extensionOf } from '@bandcollab/sdk/contract';
import { hasExpectedSignature } from '../../src/core/file-types.js';

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))));

describe('extensionOf', () => {
  it('is the lower-cased text after the last dot', () => {
    expect(extensionOf('Take 1.WAV')).toBe('wav');
    expect(extensionOf('mix.final.mp3')).toBe('mp3');
  });

  it('is empty without a dot, for a dot-file and for a trailing dot', () => {
    expect(extensionOf('README')).toBe('');
    expect(extensionOf('.mp3')).toBe('');
    expect(extensionOf('take.')).toBe('');
  });
});

describe('hasExpectedSignature', () => {
  it('accepts the leading bytes each extension promises', () => {
    const cases: [string, Buffer][] = [
      ['mp3', bytes('ID3', [4, 0])],
      ['mp3', bytes([0xff, 0xfb, 0x90])],
      ['wav', bytes('RIFF', [0, 0, 0, 0], 'WAVE')],
      ['wav', bytes('RF64', [0xff, 0xff, 0xff, 0xff], 'WAVE')],
      ['wav', bytes('BW64', [0xff, 0xff, 0xff, 0xff], 'WAVE')],
      ['ogg', bytes('OggS')],
      ['flac', bytes('fLaC')],
      ['aac', bytes([0xff, 0xf1])],
      ['aac', bytes('ADIF')],
      ['m4a', bytes([0, 0, 0, 0x20], 'ftypM4A ')],
      ['zip', bytes('PK', [3, 4])],
      ['zip', bytes('PK', [5, 6])],
      ['jpg', bytes([0xff, 0xd8, 0xff])],
      ['jpeg', bytes([0xff, 0xd8, 0xff])],
      ['png', bytes([0x89], 'PNG\r\n', [0x1a], '\n')],
      ['gif', bytes('GIF89a')],
      ['gif', bytes('GIF87a')],
      ['webp', bytes('RIFF', [0, 0, 0, 0], 'WEBP')],
    ];
    for (const [extension, head] of cases) expect(hasExpectedSignature(extension, head), extension).toBe(true);
  });

  it('refuses other bytes, a signature of another type, short heads and unknown extensions', () => {
    expect(hasExpectedSignature('wav', bytes('RIFF', [0, 0, 0, 0], 'WEBP'))).toBe(false);
    expect(hasExpectedSignature('wav', bytes('RF64', [0xff, 0xff, 0xff, 0xff], 'WEBP'))).toBe(false);
    expect(hasExpectedSignature('webp', bytes('RF64', [0xff, 0xff, 0xff, 0xff], 'WEBP'))).toBe(false);
    expect(hasExpectedSignature('png', bytes('GIF89a'))).toBe(false);
    expect(hasExpectedSignature('mp3', bytes([0xff]))).toBe(false);
    expect(hasExpectedSignature('mp3', bytes('<html>'))).toBe(false);
    expect(hasExpectedSignature('m4a', bytes('ftyp'))).toBe(false);
    expect(hasExpectedSignature('exe', bytes('MZ'))).toBe(false);
  });
});
