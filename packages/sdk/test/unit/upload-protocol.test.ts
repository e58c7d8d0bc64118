import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolFor, RESUMABLE_MIN_BYTES } from '../../src/resumable.js';
import { fileSource } from '../../src/upload-source.js';

// The one place an upload's protocol is picked (upload.ts asks it once): by the source (its size, whether its
// bytes can be read again from an offset) and the upload's options.

const MiB = 1024 * 1024;
let dir: string;
let large: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-protocol-'));
  large = path.join(dir, 'take.wav');
  await writeFile(large, Buffer.alloc(RESUMABLE_MIN_BYTES));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('protocolFor', () => {
  it("'auto' (the default) sends a replayable file of resumableMinBytes and more resumably, a smaller one as a form", async () => {
    expect(protocolFor(await fileSource(large), {})).toBe('tus');
    expect(protocolFor(await fileSource(Buffer.alloc(RESUMABLE_MIN_BYTES)), { resumable: 'auto' })).toBe('tus');
    expect(protocolFor(await fileSource(new Blob([new Uint8Array(RESUMABLE_MIN_BYTES - 1)])), {})).toBe('form');
    expect(protocolFor(await fileSource(Buffer.alloc(MiB)), { resumableMinBytes: MiB })).toBe('tus');
  });

  it('sends a stream as a form, whatever its size: its bytes cannot be read again from an offset', async () => {
    expect(protocolFor(await fileSource(Readable.from([Buffer.alloc(RESUMABLE_MIN_BYTES)]), 'take.wav'), {})).toBe('form');
    await expect(async () => protocolFor(await fileSource(Readable.from([Buffer.alloc(10)]), 'take.wav'), { resumable: true })).rejects.toThrow(TypeError);
  });

  it('follows `resumable` true and false, and never sends an empty file resumably', async () => {
    expect(protocolFor(await fileSource(Buffer.alloc(10)), { resumable: true })).toBe('tus');
    expect(protocolFor(await fileSource(large), { resumable: false })).toBe('form');
    expect(protocolFor(await fileSource(Buffer.alloc(0)), {})).toBe('form');
  });
});
