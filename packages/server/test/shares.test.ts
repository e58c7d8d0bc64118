import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from './authz/fixture.js';
import { openEventSocket } from './support/event-socket.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { call, client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

const PUBLIC_URL = 'https://band.example.com';

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: Awaited<ReturnType<typeof userWithCut>>;

beforeAll(async () => {
  server = await startTestServer({ PUBLIC_URL });
  api = client(server.url);
  owner = await userWithCut(api);
});
afterAll(() => server?.close());

const bytes = sampleBytes('mp3', 500);

async function uploaded(name = 'Song') {
  const response = await upload(api, owner.token, owner.cutId, 'song.mp3', bytes, name);
  expect(response.status).toBe(201);
  return response.body as { id: string; sha256: string; createdAt: string };
}

async function share(fileId: string, json?: unknown) {
  return api.request('POST', `/api/files/${fileId}/share`, { token: owner.token, ...(json === undefined ? {} : { json }) });
}

/** The public endpoint, without credentials. */
const publicGet = (token: string, headers: Record<string, string> = {}, query = '', method = 'GET') =>
  call(server.url, method, `/api/share/${token}${query}`, { headers });

describe('creating links', () => {
  it('makes a new 256-bit token on every call and stores only its hash', async () => {
    const file = await uploaded();
    const first = await share(file.id);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), shareUrl: `${PUBLIC_URL}/share/${first.body.token}`, expiresAt: null });
    expect(first.headers.get('location')).toBe(`/api/share/${first.body.token}`);
    const second = await share(file.id);
    expect(second.body.token).not.toBe(first.body.token);

    const stored = (await server.sql`select token_hash from share_links where file_id = ${file.id}`).map((r) => r.token_hash);
    const hash = (token: string) => createHash('sha256').update(token).digest('hex');
    expect(stored.sort()).toEqual([hash(first.body.token), hash(second.body.token)].sort());
    for (const link of [first.body, second.body]) expect((await publicGet(link.token)).status).toBe(200);
  });

  it('sets an expiry from expiresIn seconds', async () => {
    const file = await uploaded();
    const before = Date.now();
    const response = await share(file.id, { expiresIn: 3600 });
    expect(response.status).toBe(201);
    const expiresAt = Date.parse(response.body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 3600_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect((await share(file.id, { expiresIn: null })).body.expiresAt).toBeNull();
  });

  it.each([59, 31_536_001, 90.5, '3600', true])('refuses expiresIn %j with 400', async (expiresIn) => {
    const file = await uploaded();
    const response = await share(file.id, { expiresIn });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].field).toBe('expiresIn');
  });

  it('hides the file from non-members', async () => {
    const file = await uploaded();
    const stranger = await api.register();
    expect((await api.request('POST', `/api/files/${file.id}/share`, { token: stranger.accessToken })).status).toBe(404);
    const invalidBody = { token: stranger.accessToken, json: { expiresIn: 1 } };
    expect((await api.request('POST', `/api/files/${file.id}/share`, invalidBody)).status).toBe(404);
    expect((await api.request('DELETE', `/api/files/${file.id}/share`, { token: stranger.accessToken })).status).toBe(404);
  });

  it('publishes file.shared without the token', async () => {
    const file = await uploaded();
    const socket = await openEventSocket(server.url, { token: owner.token });
    try {
      const link = (await share(file.id, { expiresIn: 600 })).body;
      const event = await socket.waitFor((e) => e.type === 'file.shared');
      expect(event.data).toEqual({ fileId: file.id, expiresAt: link.expiresAt });
      expect(JSON.stringify(event)).not.toContain(link.token);
    } finally {
      socket.close();
    }
  });
});

describe('reusing a link (reuse: true, what band publish --share sends)', () => {
  const links = async (fileId: string) =>
    server.sql<{ id: string; token_sealed: Buffer | null; expires_at: Date | null }[]>`select id, token_sealed, expires_at from share_links where file_id = ${fileId}`;

  it("hands out the caller's live link again, with the same token, one row, and no event", async () => {
    const file = await uploaded();
    const socket = await openEventSocket(server.url, { token: owner.token });
    let first;
    try {
      first = await share(file.id, { reuse: true, expiresIn: 3600 });
      expect(first.status).toBe(201);
      const again = await share(file.id, { reuse: true, expiresIn: 3600 });
      expect(again.status).toBe(201);
      expect(again.body.token).toBe(first.body.token);
      expect(again.body.shareUrl).toBe(first.body.shareUrl);
      // Events arrive in order: once the plain link's has, the reuse would have had its own before it.
      await share(file.id);
      await socket.waitFor((e) => e.type === 'file.shared' && e.data.expiresAt === null);
      const shared = socket.events.filter((e) => e.type === 'file.shared' && e.data.fileId === file.id);
      expect(shared.map((e) => e.type === 'file.shared' && e.data.expiresAt)).toEqual([first.body.expiresAt, null]);
    } finally {
      socket.close();
    }
    const rows = await links(file.id);
    expect(rows).toHaveLength(2);
    // The token is kept sealed, never as itself.
    const sealed = rows.find((row) => row.token_sealed !== null)!.token_sealed!;
    expect(sealed.includes(Buffer.from(first.body.token))).toBe(false);
    expect((await publicGet(first.body.token)).status).toBe(200);
  });

  it('moves the expiry to the later of the two, never earlier', async () => {
    const file = await uploaded();
    const first = (await share(file.id, { reuse: true, expiresIn: 600 })).body;
    const later = (await share(file.id, { reuse: true, expiresIn: 7200 })).body;
    expect(later.token).toBe(first.token);
    expect(Date.parse(later.expiresAt)).toBeGreaterThan(Date.parse(first.expiresAt) + 6000_000);
    const shorter = (await share(file.id, { reuse: true, expiresIn: 60 })).body;
    expect(shorter).toEqual(later);
    expect((await links(file.id))[0]!.expires_at!.toISOString()).toBe(later.expiresAt);
    const forever = (await share(file.id, { reuse: true })).body;
    expect(forever).toMatchObject({ token: first.token, expiresAt: null });
  });

  it('makes a new link when the earlier one was not made for reuse, has other options, is revoked, or is another member’s', async () => {
    const file = await uploaded();
    const plain = (await share(file.id)).body;
    const reusable = (await share(file.id, { reuse: true })).body;
    expect(reusable.token).not.toBe(plain.token);
    const following = (await share(file.id, { reuse: true, follow: 'latest' })).body;
    expect(following.token).not.toBe(reusable.token);
    expect((await share(file.id, { reuse: true, follow: 'latest' })).body.token).toBe(following.token);

    const member = await api.register();
    await addMember(api, owner.token, owner.projectId, member);
    const theirs = await api.request('POST', `/api/files/${file.id}/share`, { token: member.accessToken, json: { reuse: true } });
    expect(theirs.status).toBe(201);
    expect([plain.token, reusable.token, following.token]).not.toContain(theirs.body.token);

    const [row] = await server.sql<{ id: string }[]>`select id from share_links where token_hash = ${createHash('sha256').update(reusable.token).digest('hex')}`;
    expect((await api.request('DELETE', `/api/shares/${row!.id}`, { token: owner.token })).status).toBe(200);
    const fresh = (await share(file.id, { reuse: true })).body;
    expect([plain.token, reusable.token, following.token, theirs.body.token]).not.toContain(fresh.token);
    expect((await publicGet(fresh.token)).status).toBe(200);
  });

  it('refuses a reuse that is not true or false', async () => {
    const file = await uploaded();
    const response = await share(file.id, { reuse: 'yes' });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].field).toBe('reuse');
  });
});

describe('the public endpoint', () => {
  it('describes the file as JSON when Accept names application/json', async () => {
    const file = await uploaded('Demo');
    const link = (await share(file.id)).body;
    for (const accept of ['application/json', 'text/html, application/json;q=0.5']) {
      const response = await publicGet(link.token, { accept });
      expect(response.status).toBe(200);
      expect(response.headers.get('vary')).toBe('Accept');
      expect(response.body).toEqual({
        kind: 'file',
        name: 'Demo',
        type: 'CUT',
        size: 500,
        mimeType: 'audio/mpeg',
        createdAt: file.createdAt,
        expiresAt: null,
        downloadUrl: `${PUBLIC_URL}/api/share/${link.token}?download=1`,
        previewUrl: null,
        download: true,
        version: 1,
        follow: 'this',
        allowComments: false,
      });
    }
  });

  it('sends the bytes otherwise: inline, as an attachment with ?download=1, with ranges and validators', async () => {
    const file = await uploaded('Demo');
    const { token } = (await share(file.id)).body;
    for (const accept of [undefined, '*/*', 'audio/*', 'application/json;q=0']) {
      const response = await fetch(`${server.url}/api/share/${token}`, { headers: accept ? { accept } : {} });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('audio/mpeg');
      expect(response.headers.get('content-disposition')).toMatch(/^inline; filename="Demo.mp3"/);
      expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);
    }
    const attachment = await publicGet(token, {}, '?download=1');
    expect(attachment.headers.get('content-disposition')).toMatch(/^attachment; filename="Demo.mp3"/);
    expect(attachment.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(attachment.headers.get('x-content-type-options')).toBe('nosniff');

    const range = await publicGet(token, { range: 'bytes=0-2' });
    expect(range.status).toBe(206);
    expect(range.text).toBe('ID3');
    expect((await publicGet(token, { range: 'bytes=500-' })).status).toBe(416);
    expect((await publicGet(token, { 'if-none-match': `"${file.sha256}"` })).status).toBe(304);
    const head = await publicGet(token, {}, '', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('500');
    expect(head.text).toBe('');
  });
});

describe('links that no longer work', () => {
  /** Every way of asking answers the same 404. */
  async function expectGone(token: string) {
    const asJson = await publicGet(token, { accept: 'application/json' });
    expect(asJson.status).toBe(404);
    expect(asJson.body).toMatchObject({ code: 'NOT_FOUND', detail: 'Share link not found' });
    expect((await publicGet(token)).status).toBe(404);
    expect((await publicGet(token, {}, '?download=1')).status).toBe(404);
    expect((await call(server.url, 'GET', `/share/${token}`)).status).toBe(404);
  }

  it('answers unknown and malformed tokens with 404', async () => {
    await expectGone('A'.repeat(43));
    await expectGone('short');
    // A percent-escape is no spelling of any route (core/listener.ts): 404 before the link is looked up.
    const escaped = await publicGet('%2E%2E%2Fetc', { accept: 'application/json' });
    expect([escaped.status, escaped.body.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('revokes every link of a file at once', async () => {
    const file = await uploaded();
    const links = [(await share(file.id)).body, (await share(file.id, { expiresIn: 600 })).body];
    const other = (await share((await uploaded()).id)).body;
    const revoked = await api.request('DELETE', `/api/files/${file.id}/share`, { token: owner.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ revoked: 2 });
    for (const link of links) await expectGone(link.token);
    expect((await publicGet(other.token)).status).toBe(200);
    expect((await api.request('DELETE', `/api/files/${file.id}/share`, { token: owner.token })).body).toEqual({ revoked: 0 });
  });

  it('stops an expired link', async () => {
    const file = await uploaded();
    const link = (await share(file.id, { expiresIn: 60 })).body;
    expect((await publicGet(link.token)).status).toBe(200);
    await server.sql`update share_links set expires_at = now() - interval '1 millisecond' where file_id = ${file.id}`;
    await expectGone(link.token);
  });

  it('stops the links of a deleted file', async () => {
    const file = await uploaded();
    const link = (await share(file.id)).body;
    expect((await api.request('DELETE', `/api/files/${file.id}`, { token: owner.token })).status).toBe(200);
    await expectGone(link.token);
  });
});

describe('the cap on live links', () => {
  it('allows 100 live links per file and per cut, also under parallel requests, and another once one is revoked', async () => {
    const file = await uploaded('Capped');
    const cut = await api.request('POST', `/api/vibes/${owner.vibeId}/cuts`, { token: owner.token, json: { name: 'Capped cut' } });
    for (const path of [`/api/files/${file.id}/share`, `/api/cuts/${cut.body.id}/share`]) {
      const attempts = await Promise.all(Array.from({ length: 103 }, () => api.request('POST', path, { token: owner.token, json: {} })));
      expect(attempts.filter((attempt) => attempt.status === 201), path).toHaveLength(100);
      const refused = attempts.filter((attempt) => attempt.status !== 201);
      expect(refused.map((attempt) => [attempt.status, attempt.body.code])).toEqual(Array(3).fill([429, 'RATE_LIMITED']));
      expect(refused[0]!.body.detail).toContain('At most 100 live links per file or cut');
    }
    const links = await api.request('GET', `/api/files/${file.id}/shares`, { token: owner.token });
    expect(links.body).toHaveLength(100);
    expect((await api.request('DELETE', `/api/shares/${links.body[0].id}`, { token: owner.token })).status).toBe(200);
    expect((await share(file.id, {})).status).toBe(201);
  });
});
