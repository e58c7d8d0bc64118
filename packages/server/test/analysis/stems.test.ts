import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { analyzeStems, type StemsAnalysis } from '../../src/analysis/index.js';
import { MAX_LISTED_STEM_ENTRIES } from '../../src/analysis/stems.js';
import { generate, hasFfmpeg } from './ffmpeg.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-stems-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes a ZIP of the given files (deflated, as a DAW's export would be) under their entry names. */
async function zipOf(name: string, files: Record<string, string | Buffer>): Promise<string> {
  const zipPath = path.join(dir, name);
  const zip = new yazl.ZipFile();
  for (const [entry, content] of Object.entries(files)) {
    if (typeof content === 'string') zip.addFile(content, entry);
    else zip.addBuffer(content, entry);
  }
  zip.end();
  await finished(zip.outputStream.pipe(createWriteStream(zipPath)));
  return zipPath;
}

function stem(name: string, rate: number, seconds: number, options: string[]): string {
  const file = path.join(dir, name);
  generate(`anoisesrc=color=pink:amplitude=0.2:sample_rate=${rate}`, seconds, options, file);
  return file;
}

function done(result: StemsAnalysis): Extract<StemsAnalysis, { status: 'done' }>['stems'] {
  if (result.status !== 'done') throw new Error(`stems analysis failed: ${result.reason}`);
  return result.stems;
}

describe.skipIf(!hasFfmpeg)('analyzeStems', () => {
  it('lists four 48 kHz 24-bit stems of one length as consistent, with every entry and its size', async () => {
    const wav = ['-c:a', 'pcm_s24le', '-ac', '2'];
    const drums = stem('drums.wav', 48000, 4, wav);
    const zipPath = await zipOf('session.zip', {
      'drums.wav': drums,
      'bass.wav': stem('bass.wav', 48000, 4, wav),
      'keys.flac': stem('keys.flac', 48000, 4, ['-c:a', 'flac', '-sample_fmt', 's32', '-ac', '2']),
      'vox/lead.wav': stem('lead.wav', 48000, 4, ['-c:a', 'pcm_s24le', '-ac', '1']),
      'notes.txt': Buffer.from('tempo 120\n'),
    });

    const { entries, summary } = done(await analyzeStems(zipPath));

    expect(entries.map((entry) => entry.path).sort()).toEqual(['bass.wav', 'drums.wav', 'keys.flac', 'notes.txt', 'vox/lead.wav']);
    expect(entries.find((entry) => entry.path === 'notes.txt')).toEqual({ path: 'notes.txt', size: 10, audio: null });
    expect(entries.find((entry) => entry.path === 'drums.wav')).toEqual({
      path: 'drums.wav',
      size: (await stat(drums)).size,
      audio: { codec: 'pcm', durationMs: 4000, sampleRate: 48000, bitDepth: 24, channels: 2 },
    });
    expect(entries.find((entry) => entry.path === 'keys.flac')?.audio).toEqual({ codec: 'flac', durationMs: 4000, sampleRate: 48000, bitDepth: 24, channels: 2 });
    expect(entries.find((entry) => entry.path === 'vox/lead.wav')?.audio?.channels).toBe(1);
    expect(summary).toEqual({ entryCount: 5, audioCount: 4, sampleRates: [48000], bitDepths: [24], longestMs: 4000, shortestMs: 4000, consistent: true });
  });

  it('flags four stems where one is 44.1 kHz as not consistent', async () => {
    const wav = ['-c:a', 'pcm_s24le'];
    const zipPath = await zipOf('mixed-rates.zip', {
      'drums.wav': stem('drums.wav', 48000, 3, wav),
      'bass.wav': stem('bass.wav', 48000, 3, wav),
      'keys.wav': stem('keys.wav', 48000, 3, wav),
      'vox.wav': stem('vox.wav', 44100, 3, wav),
    });
    const { summary } = done(await analyzeStems(zipPath));
    expect(summary).toMatchObject({ audioCount: 4, sampleRates: [44100, 48000], bitDepths: [24], consistent: false });
  });

  it('flags stems of different bit depths or lengths, and reads lossy stems without a bit depth', async () => {
    const depths = await zipOf('depths.zip', {
      'a.wav': stem('a16.wav', 48000, 3, ['-c:a', 'pcm_s16le']),
      'b.wav': stem('b24.wav', 48000, 3, ['-c:a', 'pcm_s24le']),
    });
    expect(done(await analyzeStems(depths)).summary).toMatchObject({ bitDepths: [16, 24], consistent: false });

    const lengths = await zipOf('lengths.zip', {
      'a.wav': stem('a3.wav', 48000, 3, ['-c:a', 'pcm_s24le']),
      'b.wav': stem('b302.wav', 48000, 3.02, ['-c:a', 'pcm_s24le']),
    });
    expect(done(await analyzeStems(lengths)).summary).toMatchObject({ longestMs: 3020, shortestMs: 3000, consistent: false });

    const lossy = await zipOf('lossy.zip', {
      'a.mp3': stem('a.mp3', 44100, 3, ['-c:a', 'libmp3lame', '-b:a', '192k']),
      'b.ogg': stem('b.ogg', 44100, 3, ['-c:a', 'libvorbis']),
      'c.m4a': stem('c.m4a', 44100, 3, ['-c:a', 'aac']),
    });
    const { entries } = done(await analyzeStems(lossy));
    expect(entries.map((entry) => [entry.path, entry.audio?.codec, entry.audio?.bitDepth, entry.audio?.sampleRate])).toEqual([
      ['a.mp3', 'mp3', null, 44100],
      ['b.ogg', 'vorbis', null, 44100],
      ['c.m4a', 'aac', null, 44100],
    ]);
    for (const entry of entries) expect(Math.abs(entry.audio!.durationMs - 3000)).toBeLessThanOrEqual(60);
  });

  it('lists (and so stores) at most 10,000 entries: the rest are counted, and the summary is not consistent', async () => {
    // Stored, not deflated: 10,050 deflate streams were most of this test's time, and the listing is the same.
    const zipPath = path.join(dir, 'many.zip');
    const zip = new yazl.ZipFile();
    for (let i = 0; i < MAX_LISTED_STEM_ENTRIES + 50; i += 1) zip.addBuffer(Buffer.from('x'), `n${i}.txt`, { compress: false });
    zip.end();
    await finished(zip.outputStream.pipe(createWriteStream(zipPath)));
    const analysed = await analyzeStems(zipPath);
    if (analysed.status !== 'done') throw new Error(analysed.reason);
    expect(analysed.stems.entries).toHaveLength(10_000);
    expect(analysed.stems.summary).toMatchObject({ entryCount: 10_050, consistent: false });
  });

  it('marks a ZIP with an unreadable audio entry as not consistent, and fails a file that is not a ZIP', async () => {
    const zipPath = await zipOf('broken-stem.zip', {
      'a.wav': stem('ok.wav', 48000, 2, ['-c:a', 'pcm_s24le']),
      'b.wav': Buffer.from('not a wave file at all'),
    });
    const { entries, summary } = done(await analyzeStems(zipPath));
    expect(entries.find((entry) => entry.path === 'b.wav')?.audio).toBeNull();
    expect(summary).toMatchObject({ audioCount: 1, consistent: false });

    // An entry whose compression method yauzl does not know (99 is WinZip's AES encryption): still listed.
    const oneEntry = await zipOf('encrypted.zip', { 'c.wav': stem('c.wav', 48000, 1, ['-c:a', 'pcm_s24le']) });
    const bytes = await readFile(oneEntry);
    bytes.writeUInt16LE(99, bytes.indexOf(Buffer.from([0x50, 0x4b, 0x03, 0x04])) + 8);
    bytes.writeUInt16LE(99, bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])) + 10);
    await writeFile(oneEntry, bytes);
    const encrypted = done(await analyzeStems(oneEntry));
    expect(encrypted.entries).toEqual([{ path: 'c.wav', size: expect.any(Number), audio: null }]);
    expect(encrypted.summary).toMatchObject({ entryCount: 1, audioCount: 0, consistent: false });

    const notZip = path.join(dir, 'not.zip');
    await writeFile(notZip, Buffer.alloc(1000, 1));
    expect(await analyzeStems(notZip)).toMatchObject({ status: 'failed' });
  });

  it("reads an audio entry's header from its first 32 MiB only: an MP3 behind 33 MiB of deflated zeros is listed without audio", async () => {
    const mp3 = await readFile(stem('late.mp3', 44100, 1, ['-c:a', 'libmp3lame']));
    const zipPath = await zipOf('late.zip', {
      'late.mp3': Buffer.concat([Buffer.alloc(33 * 1024 * 1024), mp3]),
      'early.mp3': mp3,
    });
    const { entries } = done(await analyzeStems(zipPath));
    expect(entries.find((entry) => entry.path === 'late.mp3')).toMatchObject({ audio: null });
    // The bound is the only reason: the same bytes up front are read.
    expect(entries.find((entry) => entry.path === 'early.mp3')).toMatchObject({ audio: { codec: 'mp3', sampleRate: 44100 } });
  });
});
