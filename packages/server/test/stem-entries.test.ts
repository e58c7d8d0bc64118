// A STEM ZIP of thousands of entries: File records (file, cut, project detail) carry only its first 100
// entries with exact counts, and GET /api/files/:id/entries pages through every one in the ZIP's order.
import type { FileRecord, StemEntriesPage, StemEntry } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from './authz/fixture.js';
import { openEventSocket } from './support/event-socket.js';
import { toneWav, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';
import { zipOf } from './support/zip.js';

const ENTRY_COUNT = 3000;
/** Positions of the real WAVs among the text entries: the first, and one far past the record's 100. */
const WAV_POSITIONS = new Set([0, 2500]);

const entryName = (position: number): string => (WAV_POSITIONS.has(position) ? `audio/take-${position}.wav` : `notes/n${position}.txt`);

function manyEntryZip(): Promise<Buffer> {
  const wav = toneWav(0.25);
  return zipOf(Array.from({ length: ENTRY_COUNT }, (_, position): [string, Buffer] => [entryName(position), WAV_POSITIONS.has(position) ? wav : Buffer.from(`note ${position}`)]));
}

describe('a STEM ZIP with thousands of entries', () => {
  let server: TestServer;
  let api: Api;
  let owner: Awaited<ReturnType<typeof userWithCut>>;
  let fileId: string;
  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    owner = await userWithCut(api);
    const socket = await openEventSocket(server.url, { token: owner.token });
    try {
      const created = await upload(api, owner.token, owner.cutId, 'session.zip', await manyEntryZip());
      expect(created.status).toBe(201);
      fileId = created.body.id;
      await socket.waitFor((event) => event.type === 'file.analyzed' && event.data.fileId === fileId, 60_000);
    } finally {
      socket.close();
    }
  });
  afterAll(() => server?.close());

  const expectBounded = (file: FileRecord | undefined) => {
    expect(file?.analysis).toBe('done');
    expect(file!.stems!.summary).toMatchObject({ entryCount: ENTRY_COUNT, audioCount: 2 });
    expect(file!.stems!.entries).toHaveLength(100);
    expect(file!.stems!.entries.map((entry) => entry.path)).toEqual(Array.from({ length: 100 }, (_, i) => entryName(i)));
    expect(file!.stems!.entries[0]!.audio).toMatchObject({ codec: 'pcm', sampleRate: 8000, bitDepth: 16, channels: 1 });
  };

  it('the file, cut and project answers carry the first 100 entries and exact counts, and stay small', async () => {
    const file = await api.request<FileRecord>('GET', `/api/files/${fileId}`, { token: owner.token });
    expectBounded(file.body);
    expect(file.text.length).toBeLessThan(20_000);

    const cut = await api.request('GET', `/api/cuts/${owner.cutId}`, { token: owner.token });
    expectBounded(cut.body.files.find((candidate: FileRecord) => candidate.id === fileId));
    expect(cut.text.length).toBeLessThan(20_000);

    const project = await api.request('GET', `/api/projects/${owner.projectId}`, { token: owner.token });
    const projectFiles: FileRecord[] = project.body.vibes.flatMap((vibe: { cuts: { files: FileRecord[] }[] }) => vibe.cuts.flatMap((cut) => cut.files));
    expectBounded(projectFiles.find((candidate) => candidate.id === fileId));
    expect(project.text.length).toBeLessThan(20_000);

    const link = await api.request('POST', `/api/cuts/${owner.cutId}/share`, { token: owner.token, json: {} });
    const shared = await api.request('GET', `/api/share/${link.body.token}`, { headers: { accept: 'application/json' } });
    expect(shared.status).toBe(200);
    expect(shared.text.length).toBeLessThan(5_000);
  });

  it('GET /api/files/:id/entries pages through every entry in order, audio facts included', async () => {
    const entries: StemEntry[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=700' : `?limit=700&cursor=${cursor}`;
      const page = await api.request<StemEntriesPage>('GET', `/api/files/${fileId}/entries${query}`, { token: owner.token });
      expect(page.status).toBe(200);
      expect(page.body.entries.length).toBeLessThanOrEqual(700);
      entries.push(...page.body.entries);
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(5);
    expect(entries.map((entry) => entry.path)).toEqual(Array.from({ length: ENTRY_COUNT }, (_, i) => entryName(i)));
    expect(entries[2500]).toMatchObject({ path: 'audio/take-2500.wav', audio: { codec: 'pcm', sampleRate: 8000 } });
    expect(entries[1]).toEqual({ path: 'notes/n1.txt', size: 'note 1'.length, audio: null, preview: null });

    const first = await api.request<StemEntriesPage>('GET', `/api/files/${fileId}/entries`, { token: owner.token });
    expect(first.body.entries).toHaveLength(500);
  });

  it('refuses a bad limit or cursor, hides the entries from non-members, and has none for other files', async () => {
    expect((await api.request('GET', `/api/files/${fileId}/entries?limit=0`, { token: owner.token })).status).toBe(400);
    expect((await api.request('GET', `/api/files/${fileId}/entries?limit=1001`, { token: owner.token })).status).toBe(400);
    expect((await api.request('GET', `/api/files/${fileId}/entries?cursor=abc`, { token: owner.token })).status).toBe(400);
    const stranger = await api.register();
    expect((await api.request('GET', `/api/files/${fileId}/entries`, { token: stranger.accessToken })).status).toBe(404);
    const image = await upload(api, owner.token, owner.cutId, 'cover.png', Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(64)]));
    expect((await api.request('GET', `/api/files/${image.body.id}/entries`, { token: owner.token })).status).toBe(404);
  });
});
