import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandClient, type FileRecord } from '../src/index.js';
import { registeredClient, startTestServer, type TestServer } from './support.js';

let server: TestServer;
let owner: BandClient;
let record: FileRecord;
let workDir: string;
const content = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(300_000, 3)]);

beforeAll(async () => {
  server = await startTestServer();
  owner = (await registeredClient(server.url)).client;
  const project = await owner.projects.create({ name: 'Shares' });
  const vibe = await owner.vibes.create(project.id, { name: 'Verse' });
  const cut = await owner.cuts.create(vibe.id, { name: 'Take' });
  record = await owner.files.upload({ cutId: cut.id, file: content, filename: 'song.mp3' });
  workDir = await mkdtemp(path.join(os.tmpdir(), 'sdk-shares-'));
});
afterAll(async () => {
  await server?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('share links', () => {
  it('share, then get and download without an account, by token or URL, until unshared', async () => {
    const link = await owner.files.share(record.id, { expiresIn: 3600 });
    expect(link.shareUrl).toMatch(new RegExp(`/share/${link.token}$`));
    expect(Date.parse(link.expiresAt!)).toBeGreaterThan(Date.now());
    const permanent = await owner.files.share(record.id);
    expect(permanent.expiresAt).toBeNull();

    const anonymous = new BandClient({ baseUrl: server.url });
    expect(await anonymous.shares.get(link.token)).toMatchObject({ type: 'CUT', size: content.length, mimeType: 'audio/mpeg', expiresAt: link.expiresAt });

    // A share URL is fetched from its own server, whatever the client's baseUrl.
    const shareUrl = `${server.url}/share/${permanent.token}`;
    const elsewhere = new BandClient({ baseUrl: 'http://127.0.0.1:9', retries: 0 });
    expect((await elsewhere.shares.get(shareUrl)).size).toBe(content.length);
    const target = path.join(workDir, 'shared.mp3');
    expect(await elsewhere.shares.download(shareUrl, { to: target })).toEqual({ size: content.length, path: target });
    expect((await readFile(target)).equals(content)).toBe(true);

    expect(await owner.files.unshare(record.id)).toEqual({ revoked: 2 });
    await expect(anonymous.shares.get(link.token)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    await expect(anonymous.shares.download(shareUrl, { to: path.join(workDir, 'gone.mp3') })).rejects.toMatchObject({ status: 404 });
  });
});
