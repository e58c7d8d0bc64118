import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BandClient, isUnchanged } from '../src/index.js';
import { registeredClient, startTestServer, type TestServer } from './support.js';

// §14 through the SDK: versionOf and ifChanged on both upload paths, the versions list, whole-series deletes.

let server: TestServer;
let owner: BandClient;
let cutId: string;

beforeAll(async () => {
  server = await startTestServer();
  owner = (await registeredClient(server.url)).client;
  const project = await owner.projects.create({ name: 'Versions' });
  const vibe = await owner.vibes.create(project.id, { name: 'Masters' });
  cutId = (await owner.cuts.create(vibe.id, { name: 'Single' })).id;
});
afterAll(() => server?.close());

const wav = (fill: number) => Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(4096, fill)]);

describe.each([false, true])('versions (resumable: %s)', (resumable) => {
  it('uploads the next version, skips an unchanged one as UNCHANGED, lists and deletes the series', async () => {
    const v1 = await owner.files.upload({ cutId, file: wav(1), filename: 'mix.wav', name: 'Mix', resumable });
    const v2 = await owner.files.upload({ versionOf: v1.id, ifChanged: true, file: wav(2), filename: 'mix.wav', resumable });
    expect(v2).toMatchObject({ cutId, name: 'Mix', series: { id: v1.id, version: 2, latest: true, count: 2 } });

    const unchanged = await owner.files.upload({ versionOf: v1.id, ifChanged: true, file: wav(2), filename: 'mix.wav', resumable }).catch((error: unknown) => error);
    expect(isUnchanged(unchanged)).toBe(true);
    if (!isUnchanged(unchanged)) throw unchanged;
    expect(unchanged.status).toBe(412);
    expect(unchanged.problem.fileId).toBe(v2.id);

    const { seriesId, versions } = await owner.files.versions(v1.id);
    expect(seriesId).toBe(v1.id);
    expect(versions.map((file) => file.series.version)).toEqual([1, 2]);
    expect(await owner.files.deleteSeries(v2.id)).toEqual({ seriesId: v1.id, deleted: 2, trashedUntil: expect.any(String) });
  });
});

describe('ifChanged with a known sha256', () => {
  it('sends it as it is, without hashing the file first: a stream, which cannot be read twice, may be given', async () => {
    const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const v1 = await owner.files.upload({ cutId, file: wav(3), filename: 'stem.wav' });
    await expect(owner.files.upload({ versionOf: v1.id, ifChanged: true, file: Readable.from([wav(3)]), filename: 'stem.wav' })).rejects.toThrow(/cannot be read twice/);

    const unchanged = await owner.files.upload({ versionOf: v1.id, ifChanged: { sha256: sha256(wav(3)).toUpperCase() }, file: Readable.from([wav(3)]), filename: 'stem.wav' }).catch((error: unknown) => error);
    expect(isUnchanged(unchanged)).toBe(true);
    const v2 = await owner.files.upload({ versionOf: v1.id, ifChanged: { sha256: sha256(wav(4)) }, file: Readable.from([wav(4)]), filename: 'stem.wav' });
    expect(v2).toMatchObject({ sha256: sha256(wav(4)), series: { id: v1.id, version: 2 } });
    await expect(owner.files.upload({ versionOf: v1.id, ifChanged: { sha256: 'not a hash' }, file: wav(5), filename: 'stem.wav' })).rejects.toThrow(/sha256 in hex/);
  });
});
