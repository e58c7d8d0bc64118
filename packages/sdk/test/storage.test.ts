import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BandClient, BandApiError, isStorageFull } from '../src/index.js';
import { registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;
let owner: BandClient;
const MiB = 1024 * 1024;

beforeAll(async () => {
  server = await startTestServer();
  owner = (await registeredClient(server.url)).client; // the first account: a site ADMIN
});
afterAll(() => server?.close());

describe('storage', () => {
  it('reports the caller’s uploads by kind, and the whole site for a site ADMIN', async () => {
    const project = await owner.projects.create({ name: 'Storage' });
    const vibe = await owner.vibes.create(project.id, { name: 'Verse' });
    const cut = await owner.cuts.create(vibe.id, { name: 'Take' });
    await owner.files.upload({ cutId: cut.id, file: Buffer.concat([Buffer.from('ID3'), Buffer.alloc(MiB)]), filename: 'a.mp3' });
    await owner.files.upload({ cutId: cut.id, file: Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(2 * MiB)]), filename: 'b.zip' });

    const stats = await owner.files.storage();
    expect(stats).toMatchObject({
      totalSize: 3 * MiB + 7,
      fileCount: 2,
      breakdown: { audio: { size: MiB + 3, count: 1 }, stems: { size: 2 * MiB + 4, count: 1 }, images: { size: 0, count: 0 }, other: { size: 0, count: 0 } },
    });
    expect(stats.site).toMatchObject({ totalSize: 3 * MiB + 7, fileCount: 2, userCount: 1, projectCount: 1 });

    const { client: member } = await registeredClient(server.url);
    const own = await member.files.storage();
    expect(own).toMatchObject({ totalSize: 0, fileCount: 0 });
    expect(own.site).toBeUndefined();
  });
});

describe('quota', () => {
  let quotaServer: TestServer;
  beforeAll(async () => {
    quotaServer = await startTestServer({ USER_QUOTA_MB: '1' });
  });
  afterAll(() => quotaServer?.close());

  it('reports the quota, and an upload over it as a 507 BandApiError that isStorageFull names', async () => {
    const { client } = await registeredClient(quotaServer.url);
    const project = await client.projects.create({ name: 'Quota' });
    const vibe = await client.vibes.create(project.id, { name: 'Verse' });
    const cut = await client.cuts.create(vibe.id, { name: 'Take' });
    const take = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(600 * 1024)]);
    await client.files.upload({ cutId: cut.id, file: take, filename: 'a.mp3' });
    expect((await client.files.storage()).quota).toEqual({ limitBytes: MiB, usedBytes: take.length });

    const refused = await client.files.upload({ cutId: cut.id, file: take, filename: 'b.mp3' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BandApiError);
    expect(isStorageFull(refused)).toBe(true);
    expect(refused).toMatchObject({ status: 507, code: 'QUOTA_EXCEEDED', detail: expect.stringContaining('quota of 1 MiB') });
    expect((await owner.files.storage()).quota).toBeNull();
  });
});
