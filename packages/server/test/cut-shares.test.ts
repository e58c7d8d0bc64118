import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from './authz/fixture.js';
import { openEventSocket } from './support/event-socket.js';
import { analysed, sampleBytes, toneWav, upload, userWithCut } from './support/files.js';
import { call, client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';
import { readZip } from './support/zip.js';

const PUBLIC_URL = 'https://band.example.com';

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;
let member: Awaited<ReturnType<typeof api.register>>;

beforeAll(async () => {
  server = await startTestServer({ PUBLIC_URL });
  api = client(server.url);
  owner = await userWithCut(api);
  member = await api.register();
  await addMember(api, owner.token, owner.projectId, member);
});
afterAll(() => server?.close());

async function newCut(name: string): Promise<string> {
  return (await api.request('POST', `/api/vibes/${owner.vibeId}/cuts`, { token: owner.token, json: { name } })).body.id;
}

async function put(cutId: string, fileName: string, bytes: Buffer, name?: string, token = owner.token) {
  const response = await upload(api, token, cutId, fileName, bytes, name);
  expect(response.status).toBe(201);
  return response.body as { id: string; createdAt: string };
}

async function shareCut(cutId: string, token = owner.token, json: unknown = {}) {
  const response = await api.request('POST', `/api/cuts/${cutId}/share`, { token, json });
  expect(response.status).toBe(201);
  return response.body as { token: string; shareUrl: string; expiresAt: string | null };
}

async function shareFile(fileId: string, token = owner.token) {
  const response = await api.request('POST', `/api/files/${fileId}/share`, { token, json: {} });
  expect(response.status).toBe(201);
  return response.body as { token: string };
}

const publicCall = (method: string, path: string, headers: Record<string, string> = {}) => call(server.url, method, path, { headers });
const asJson = { accept: 'application/json' };

async function links(kind: 'files' | 'cuts', id: string, token = owner.token) {
  const response = await api.request('GET', `/api/${kind}/${id}/shares`, { token });
  expect(response.status).toBe(200);
  return response.body as { id: string; createdBy: { id: string; name: string }; accessCount: number; lastAccessedAt: string | null; expiresAt: string | null; createdAt: string }[];
}

describe('cut share links', () => {
  it('make a 256-bit link, answer 201 with its URL and publish cut.shared without the token', async () => {
    const cutId = await newCut('Shared take');
    const socket = await openEventSocket(server.url, { token: owner.token });
    try {
      const link = await shareCut(cutId, owner.token, { expiresIn: 3600 });
      expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(link.shareUrl).toBe(`${PUBLIC_URL}/share/${link.token}`);
      const event = await socket.waitFor((e) => e.type === 'cut.shared');
      expect(event.data).toEqual({ cutId, expiresAt: link.expiresAt });
      expect(JSON.stringify(event)).not.toContain(link.token);
    } finally {
      socket.close();
    }
  });

  it('hand out the link an earlier request with reuse made of the cut, and a new one without reuse', async () => {
    const cutId = await newCut('Reused');
    const first = await shareCut(cutId, owner.token, { reuse: true });
    expect(await shareCut(cutId, owner.token, { reuse: true })).toEqual(first);
    expect((await shareCut(cutId)).token).not.toBe(first.token);
    expect((await api.request('GET', `/api/share/${first.token}`, { headers: { accept: 'application/json' } })).body.kind).toBe('cut');
  });

  it('describe the cut and its files as they are when opened (kind: "cut")', async () => {
    const cutId = await newCut('Take 3');
    const kick = await put(cutId, 'kick.wav', sampleBytes('wav', 1_000), 'Kick');
    const link = await shareCut(cutId);
    const later = await put(cutId, 'cover.png', sampleBytes('png', 100), 'Cover');
    const response = await publicCall('GET', `/api/share/${link.token}`, asJson);
    expect(response.status).toBe(200);
    const base = `${PUBLIC_URL}/api/share/${link.token}`;
    expect(response.body).toEqual({
      kind: 'cut',
      name: 'Take 3',
      expiresAt: null,
      archiveUrl: `${base}/archive`,
      download: true,
      files: [
        { id: kick.id, name: 'Kick', type: 'CUT', size: 1_000, mimeType: 'audio/wav', audio: null, downloadUrl: `${base}/files/${kick.id}?download=1`, previewUrl: null, peaksUrl: null },
        { id: later.id, name: 'Cover', type: 'IMAGE', size: 100, mimeType: 'image/png', audio: null, downloadUrl: `${base}/files/${later.id}?download=1`, previewUrl: null, peaksUrl: null },
      ],
    });
  });

  it("give an analysed take its audio facts and a waveform under the link, and no other file's", async () => {
    const cutId = await newCut('Analysed');
    const tone = await put(cutId, 'tone.wav', toneWav(2), 'Tone');
    const other = await put(owner.cutId, 'elsewhere.wav', toneWav(1));
    for (const id of [tone.id, other.id]) expect((await analysed(api, owner.token, id)).analysis).toBe('done');
    const { token } = await shareCut(cutId);
    const described = await publicCall('GET', `/api/share/${token}`, asJson);
    const [file] = described.body.files;
    const peaksUrl = `${PUBLIC_URL}/api/share/${token}/files/${tone.id}/peaks`;
    expect(file).toMatchObject({ peaksUrl, audio: { codec: 'pcm', sampleRate: 8000, channels: 1, peaksUrl } });
    const peaks = await publicCall('GET', `/api/share/${token}/files/${tone.id}/peaks`);
    expect(peaks.status).toBe(200);
    expect(peaks.body).toMatchObject({ version: 2, channels: 1, bits: 8 });
    expect((await publicCall('GET', `/api/share/${token}/files/${other.id}/peaks`)).status).toBe(404);
  });

  it('serve each file of the cut (ranges, inline or as an attachment) and nothing else', async () => {
    const cutId = await newCut('Bytes');
    const bytes = sampleBytes('mp3', 2_000);
    const file = await put(cutId, 'song.mp3', bytes, 'Song');
    const elsewhere = await put(owner.cutId, 'other.mp3', sampleBytes('mp3', 10));
    const { token } = await shareCut(cutId);
    const whole = await fetch(`${server.url}/api/share/${token}/files/${file.id}`);
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true);
    expect(whole.headers.get('content-disposition')).toMatch(/^inline; filename="Song.mp3"/);
    const attachment = await fetch(`${server.url}/api/share/${token}/files/${file.id}?download=1`);
    expect(attachment.headers.get('content-disposition')).toMatch(/^attachment; filename="Song.mp3"/);
    const ranged = await fetch(`${server.url}/api/share/${token}/files/${file.id}`, { headers: { range: 'bytes=100-199' } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(100, 200))).toBe(true);
    expect((await publicCall('GET', `/api/share/${token}/files/${elsewhere.id}`)).status).toBe(404);
    // A file link opens no other file, and has no archive.
    const fileLink = await shareFile(elsewhere.id);
    expect((await publicCall('GET', `/api/share/${fileLink.token}/files/${file.id}`)).status).toBe(404);
    expect((await publicCall('GET', `/api/share/${fileLink.token}/archive`)).status).toBe(404);
  });

  it('serve the cut as one ZIP under the token, and without Accept: application/json on the link itself', async () => {
    const cutId = await newCut('Archive');
    const bytes = sampleBytes('wav', 5_000);
    await put(cutId, 'a.wav', bytes, 'A');
    const { token } = await shareCut(cutId);
    for (const path of [`/api/share/${token}/archive`, `/api/share/${token}`]) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/zip');
      expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="Archive.zip"/);
      const zip = Buffer.from(await response.arrayBuffer());
      expect(Number(response.headers.get('content-length'))).toBe(zip.length);
      const { entries } = await readZip(zip);
      expect(entries.map((entry) => entry.name)).toEqual(['A.wav']);
      expect(entries[0]!.bytes.equals(bytes)).toBe(true);
    }
  });

  it('show a page listing the files with players, and a Download all link', async () => {
    const cutId = await newCut('Page <take>');
    const song = await put(cutId, 'song.wav', sampleBytes('wav', 300), 'Song');
    const stems = await put(cutId, 'stems.zip', sampleBytes('zip', 300), 'Stems');
    const { token } = await shareCut(cutId);
    const response = await publicCall('GET', `/share/${token}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(response.text).toContain('<h1>Page &#60;take&#62;</h1>');
    expect(response.text).toContain(`<audio controls preload="metadata" src="/api/share/${token}/files/${song.id}"></audio>`);
    expect(response.text).not.toContain(`src="/api/share/${token}/files/${stems.id}"`);
    expect(response.text).toContain(`<a class="download" href="/api/share/${token}/archive" download>Download all</a>`);
    expect(response.text).toContain(`href="/api/share/${token}/files/${stems.id}?download=1"`);
    expect(response.text).not.toMatch(/<script/i);
  });

  it('show what the analysis measured and the waveform of each analysed take, with the seek script', async () => {
    const cutId = await newCut('Page of analysed takes');
    const tone = await put(cutId, 'tone.wav', toneWav(5), 'Tone');
    const broken = await put(cutId, 'broken.wav', sampleBytes('wav', 2000), 'Broken');
    for (const id of [tone.id, broken.id]) await analysed(api, owner.token, id);
    const { token } = await shareCut(cutId);
    const response = await publicCall('GET', `/share/${token}`);
    expect(response.status).toBe(200);
    // Listed by name: Broken, then Tone. Tone plays its preview once made (§20), its original until then.
    const [brokenItem, toneItem] = response.text.split('<li>').slice(1);
    expect(toneItem).toMatch(/<p class="meta">0:05 · PCM, 8 kHz, 16-bit, mono · -\d+\.\d LUFS/);
    expect(toneItem).toMatch(
      new RegExp(`<div class="wave" data-duration-ms="5000"><svg class="waveform" [^>]*>.*</svg><div class="playhead"></div></div><audio controls preload="metadata" src="/api/share/${token}/files/${tone.id}(/preview)?"[^>]*></audio>`),
    );
    expect(brokenItem).not.toMatch(/<svg|class="meta">\d/);
    expect(brokenItem).toContain(`<audio controls preload="metadata" src="/api/share/${token}/files/${broken.id}"></audio>`);
    expect(response.text.match(/<script src="\/share-assets\/share-page\.js" defer><\/script>/g)).toHaveLength(1);
  });

  it('stop working when revoked, expired, or when the cut is deleted: 404 like an unknown token', async () => {
    const cutId = await newCut('Going');
    const file = await put(cutId, 'a.wav', sampleBytes('wav', 100));
    const revoked = await shareCut(cutId);
    const expired = await shareCut(cutId, owner.token, { expiresIn: 60 });
    const deleted = await shareCut(cutId);
    await server.sql`update share_links set expires_at = now() - interval '1 second' where id = (
      select id from share_links where cut_id = ${cutId} and expires_at is not null)`;
    const revokeAll = await api.request('DELETE', `/api/cuts/${cutId}/share`, { token: owner.token });
    expect(revokeAll.body).toEqual({ revoked: 3 });
    for (const { token } of [revoked, expired, deleted]) {
      for (const path of [`/api/share/${token}`, `/api/share/${token}/archive`, `/api/share/${token}/files/${file.id}`]) {
        expect((await publicCall('GET', path)).status).toBe(404);
      }
      expect((await publicCall('GET', `/share/${token}`)).status).toBe(404);
    }
    const again = await shareCut(cutId);
    expect((await api.request('DELETE', `/api/cuts/${cutId}`, { token: owner.token })).status).toBe(200);
    expect((await publicCall('GET', `/api/share/${again.token}`, asJson)).status).toBe(404);
  });

  it('are hidden from strangers', async () => {
    const cutId = await newCut('Hidden');
    const stranger = await api.register();
    expect((await api.request('POST', `/api/cuts/${cutId}/share`, { token: stranger.accessToken, json: { expiresIn: 1 } })).status).toBe(404);
    expect((await api.request('GET', `/api/cuts/${cutId}/shares`, { token: stranger.accessToken })).status).toBe(404);
    expect((await api.request('DELETE', `/api/cuts/${cutId}/share`, { token: stranger.accessToken })).status).toBe(404);
  });
});

describe('link management', () => {
  it('lists the live links of a file and of a cut with their creator, expiry and use, never a token', async () => {
    const cutId = await newCut('Listed');
    const file = await put(cutId, 'a.wav', sampleBytes('wav', 100));
    const mine = await shareFile(file.id);
    const theirs = await shareFile(file.id, member.accessToken);
    const expired = await api.request('POST', `/api/files/${file.id}/share`, { token: owner.token, json: { expiresIn: 60 } });
    await server.sql`update share_links set expires_at = now() - interval '1 second' where file_id = ${file.id} and expires_at is not null`;
    const cutLink = await shareCut(cutId, member.accessToken, { expiresIn: 7200 });

    const fileLinks = await links('files', file.id, member.accessToken);
    expect(fileLinks).toEqual([
      { id: expect.any(String), createdAt: expect.any(String), createdBy: { id: owner.user.user.id, name: owner.user.user.name }, expiresAt: null, lastAccessedAt: null, accessCount: 0, download: true, plays: 0, downloads: 0 },
      { id: expect.any(String), createdAt: expect.any(String), createdBy: { id: member.user.id, name: member.user.name }, expiresAt: null, lastAccessedAt: null, accessCount: 0, download: true, plays: 0, downloads: 0 },
    ]);
    const body = JSON.stringify(fileLinks);
    for (const token of [mine.token, theirs.token, expired.body.token]) expect(body).not.toContain(token);

    const cutLinks = await links('cuts', cutId);
    expect(cutLinks).toEqual([
      { id: expect.any(String), createdAt: expect.any(String), createdBy: { id: member.user.id, name: member.user.name }, expiresAt: cutLink.expiresAt, lastAccessedAt: null, accessCount: 0, download: true, plays: 0, downloads: 0 },
    ]);
    expect(JSON.stringify(cutLinks)).not.toContain(cutLink.token);
  });

  it('revokes one link: its creator, the file’s uploader or a project ADMIN; another member gets 403, a stranger 404', async () => {
    const cutId = await newCut('Revoking');
    const ownersFile = await put(cutId, 'a.wav', sampleBytes('wav', 100));
    const membersFile = await put(cutId, 'b.wav', sampleBytes('wav', 100), undefined, member.accessToken);
    const stranger = await api.register();
    const revoke = (id: string, token: string) => api.request('DELETE', `/api/shares/${id}`, { token });
    const idOf = async (kind: 'files' | 'cuts', id: string, creatorId: string) =>
      (await links(kind, id)).find((link) => link.createdBy.id === creatorId)!.id;

    // The ADMIN's link of the ADMIN's file: the member may not, a stranger does not see it.
    const adminLink = await shareFile(ownersFile.id);
    const adminLinkId = await idOf('files', ownersFile.id, owner.user.user.id);
    expect((await revoke(adminLinkId, member.accessToken)).status).toBe(403);
    expect((await revoke(adminLinkId, stranger.accessToken)).status).toBe(404);
    expect((await api.request('DELETE', `/api/shares/${adminLinkId}`)).status).toBe(401);
    // Its creator may.
    const revoked = await revoke(adminLinkId, owner.token);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ id: adminLinkId, deleted: true });
    expect((await publicCall('GET', `/api/share/${adminLink.token}`)).status).toBe(404);
    expect((await revoke(adminLinkId, owner.token)).status).toBe(404);

    // The ADMIN's link of the member's file: the member, as the uploader, may.
    await shareFile(membersFile.id);
    expect((await revoke(await idOf('files', membersFile.id, owner.user.user.id), member.accessToken)).status).toBe(200);

    // The member's link of a cut: the ADMIN may; of the ADMIN's cut link, the member may not.
    await shareCut(cutId, member.accessToken);
    const adminCutLink = await shareCut(cutId);
    expect((await revoke(await idOf('cuts', cutId, owner.user.user.id), member.accessToken)).status).toBe(403);
    expect((await revoke(await idOf('cuts', cutId, member.user.id), owner.token)).status).toBe(200);
    // Revoking all of a cut's links needs an ADMIN once others made some.
    expect((await api.request('DELETE', `/api/cuts/${cutId}/share`, { token: member.accessToken })).status).toBe(403);
    expect((await publicCall('GET', `/api/share/${adminCutLink.token}`, asJson)).status).toBe(200);
    expect((await revoke('not-a-uuid', owner.token)).status).toBe(404);
  });
});

describe('access counting', () => {
  it('counts page views and downloads once each; HEAD, JSON, range continuations and the page’s players do not add up', async () => {
    const cutId = await newCut('Counted');
    const bytes = sampleBytes('wav', 4_000);
    const file = await put(cutId, 'a.wav', bytes);
    const cutLink = await shareCut(cutId);
    const fileLink = await shareFile(file.id);
    const count = async (kind: 'files' | 'cuts', id: string) => {
      const [link] = await links(kind, id);
      return link!;
    };

    const before = Date.now();
    // Cut link: a page view (+1), the page's player loading and seeking (0), a file download (+1) resumed
    // with a range (0), the archive (+1), its HEAD (0), the JSON (0).
    expect((await publicCall('GET', `/share/${cutLink.token}`)).status).toBe(200);
    expect((await publicCall('HEAD', `/share/${cutLink.token}`)).status).toBe(200);
    const player = { 'sec-fetch-dest': 'audio' };
    expect((await publicCall('GET', `/api/share/${cutLink.token}/files/${file.id}`, { ...player, range: 'bytes=0-' })).status).toBe(206);
    expect((await publicCall('GET', `/api/share/${cutLink.token}/files/${file.id}`, { ...player, range: 'bytes=2000-' })).status).toBe(206);
    expect((await publicCall('GET', `/api/share/${cutLink.token}/files/${file.id}?download=1`)).status).toBe(200);
    expect((await publicCall('GET', `/api/share/${cutLink.token}/files/${file.id}?download=1`, { range: 'bytes=1000-' })).status).toBe(206);
    expect((await publicCall('HEAD', `/api/share/${cutLink.token}/archive`)).status).toBe(200);
    expect((await publicCall('GET', `/api/share/${cutLink.token}/archive`)).status).toBe(200);
    expect((await publicCall('GET', `/api/share/${cutLink.token}`, asJson)).status).toBe(200);
    const cutCount = await count('cuts', cutId);
    expect(cutCount.accessCount).toBe(3);
    expect(Date.parse(cutCount.lastAccessedAt!)).toBeGreaterThanOrEqual(before - 1000);

    // File link: a download from byte 0 in two ranged parts (+1), a plain GET (+1), a HEAD (0), the page (+1).
    expect((await publicCall('GET', `/api/share/${fileLink.token}`, { range: 'bytes=0-1999' })).status).toBe(206);
    expect((await publicCall('GET', `/api/share/${fileLink.token}`, { range: 'bytes=2000-' })).status).toBe(206);
    expect((await publicCall('GET', `/api/share/${fileLink.token}?download=1`)).status).toBe(200);
    expect((await publicCall('HEAD', `/api/share/${fileLink.token}`)).status).toBe(200);
    expect((await publicCall('GET', `/share/${fileLink.token}`)).status).toBe(200);
    expect((await count('files', file.id)).accessCount).toBe(3);
  });
});
