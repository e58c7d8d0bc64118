import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BandClient, type FileRecord } from '../src/index.js';
import { toneWav } from '../../server/test/support/files.js';
import { readZip } from '../../server/test/support/zip.js';
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
    expect(await elsewhere.shares.get(shareUrl)).toMatchObject({ kind: 'file', size: content.length });
    const target = path.join(workDir, 'shared.mp3');
    expect(await elsewhere.shares.download(shareUrl, { to: target })).toEqual({ size: content.length, path: target });
    expect((await readFile(target)).equals(content)).toBe(true);

    expect(await owner.files.unshare(record.id)).toEqual({ revoked: 2 });
    await expect(anonymous.shares.get(link.token)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    await expect(anonymous.shares.download(shareUrl, { to: path.join(workDir, 'gone.mp3') })).rejects.toMatchObject({ status: 404 });
  });
});

describe('cut archives and cut links', () => {
  it('archive a cut to a path with progress, or to a stream; share it, list, count and revoke its links', async () => {
    const project = await owner.projects.create({ name: 'Archives' });
    const vibe = await owner.vibes.create(project.id, { name: 'Verse' });
    const cut = await owner.cuts.create(vibe.id, { name: 'Take 3' });
    const wav = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(200_000, 5)]);
    await owner.files.upload({ cutId: cut.id, file: wav, filename: 'kick.wav', name: 'Kick' });
    await owner.files.upload({ cutId: cut.id, file: wav, filename: 'kick.wav', name: 'Kick' });

    const target = path.join(workDir, 'take3.zip');
    const progress: { loaded: number; total: number | null }[] = [];
    const saved = await owner.cuts.archive(cut.id, { to: target, onProgress: (p) => progress.push(p) });
    const zip = await readFile(target);
    expect(saved).toEqual({ size: zip.length, path: target });
    expect(progress.at(-1)).toEqual({ loaded: zip.length, total: zip.length });
    const { entries } = await readZip(zip);
    expect(entries.map((entry) => entry.name)).toEqual(['Kick.wav', 'Kick (2).wav']);
    expect(entries.every((entry) => entry.bytes.equals(wav))).toBe(true);

    const chunks: Buffer[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (chunks.push(chunk), done()) });
    expect(await owner.cuts.archive(cut.id, { to: sink })).toEqual({ size: zip.length });
    expect(Buffer.concat(chunks).equals(zip)).toBe(true);

    const link = await owner.cuts.share(cut.id, { expiresIn: 3600 });
    const anonymous = new BandClient({ baseUrl: server.url });
    const shared = await anonymous.shares.get(link.shareUrl);
    expect(shared).toMatchObject({ kind: 'cut', name: 'Take 3', expiresAt: link.expiresAt });
    if (shared.kind !== 'cut') throw new Error('a cut link');
    expect(shared.files.map((file) => file.name)).toEqual(['Kick', 'Kick']);
    const viaLink = path.join(workDir, 'via-link.zip');
    await anonymous.shares.download(link.token, { to: viaLink });
    expect((await readFile(viaLink)).equals(zip)).toBe(true);

    const [listed] = await owner.shares.list({ cutId: cut.id });
    expect(listed).toMatchObject({ accessCount: 1, expiresAt: link.expiresAt });
    expect(await owner.shares.list({ fileId: shared.files[0]!.id })).toEqual([]);
    expect(await owner.shares.revoke(listed!.id)).toEqual({ id: listed!.id, deleted: true });
    await expect(anonymous.shares.get(link.token)).rejects.toMatchObject({ status: 404 });
    expect(await owner.shares.list({ cutId: cut.id })).toEqual([]);
    await owner.cuts.share(cut.id);
    expect(await owner.cuts.unshare(cut.id)).toEqual({ revoked: 1 });
  });
});

describe('what a link shares, piece by piece, without an account', () => {
  it("a file link's waveform; a cut link's file, its waveform and its ZIP", async () => {
    const project = await owner.projects.create({ name: 'Pieces' });
    const vibe = await owner.vibes.create(project.id, { name: 'Verse' });
    const cut = await owner.cuts.create(vibe.id, { name: 'Take 4' });
    const tone = toneWav(1);
    const uploaded = await owner.files.upload({ cutId: cut.id, file: tone, filename: 'tone.wav' });
    await owner.files.waitForAnalysis(uploaded.id, { signal: AbortSignal.timeout(30_000) });
    const waveform = await owner.files.peaks(uploaded.id);
    const anonymous = new BandClient({ baseUrl: server.url });

    const fileLink = await owner.files.share(uploaded.id);
    expect(await anonymous.shares.peaks(fileLink.shareUrl)).toEqual(waveform);

    const cutLink = await owner.cuts.share(cut.id);
    expect(await anonymous.shares.peaks(cutLink.token, uploaded.id)).toEqual(waveform);
    const one = path.join(workDir, 'piece.wav');
    expect(await anonymous.shares.downloadFile(cutLink.shareUrl, uploaded.id, { to: one })).toEqual({ size: tone.length, path: one });
    expect((await readFile(one)).equals(tone)).toBe(true);
    const all = path.join(workDir, 'pieces.zip');
    await anonymous.shares.downloadArchive(cutLink.token, { to: all });
    expect((await readZip(await readFile(all))).entries.map((entry) => entry.bytes.equals(tone))).toEqual([true]);
    // A file link has no files of its own, nor a ZIP.
    await expect(anonymous.shares.peaks(fileLink.token, uploaded.id)).rejects.toMatchObject({ status: 404 });
    await expect(anonymous.shares.downloadArchive(fileLink.token, { to: path.join(workDir, 'none.zip') })).rejects.toMatchObject({ status: 404 });
  });
});
