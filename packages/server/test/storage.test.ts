import { afterAll, beforeAll, expect, it } from 'vitest';
import { seedProject } from './authz/fixture.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let admin: Awaited<ReturnType<typeof userWithCut>>;
let alice: Awaited<ReturnType<typeof userWithCut>>;
let bob: Awaited<ReturnType<typeof userWithCut>>;

beforeAll(async () => {
  // Deletes for good (TRASH_RETENTION_DAYS=0): trashed bytes count until purged (trash.test.ts).
  server = await startTestServer({ TRASH_RETENTION_DAYS: '0' });
  api = client(server.url);
  admin = await userWithCut(api);
  alice = await userWithCut(api);
  bob = await userWithCut(api);
  expect(admin.user.user.role).toBe('ADMIN');
  const uploads: [typeof alice, string, number][] = [
    [alice, 'a.mp3', 100],
    [alice, 'b.flac', 200],
    [alice, 'c.zip', 300],
    [alice, 'd.png', 50],
    [bob, 'e.wav', 400],
    [admin, 'f.gif', 10],
  ];
  for (const [owner, fileName, size] of uploads) {
    const response = await upload(api, owner.token, owner.cutId, fileName, sampleBytes(fileName.split('.')[1]!, size));
    expect(response.status).toBe(201);
  }
});
afterAll(() => server?.close());

const stats = (token: string) => api.request('GET', '/api/files/storage', { token });

it("counts the caller's own uploads by type, with totals that add up, and no site block for MEMBERs", async () => {
  const response = await stats(alice.token);
  expect(response.status).toBe(200);
  expect(response.body).toEqual({
    totalSize: 650,
    fileCount: 4,
    breakdown: { audio: { size: 300, count: 2 }, stems: { size: 300, count: 1 }, images: { size: 50, count: 1 }, other: { size: 0, count: 0 }, previews: { size: 0, count: 0 } },
    quota: null,
  });
});

it('gives a site ADMIN the site block over every user', async () => {
  const response = await stats(admin.token);
  expect(response.body).toEqual({
    totalSize: 10,
    fileCount: 1,
    breakdown: { audio: { size: 0, count: 0 }, stems: { size: 0, count: 0 }, images: { size: 10, count: 1 }, other: { size: 0, count: 0 }, previews: { size: 0, count: 0 } },
    quota: null,
    site: {
      totalSize: 1060,
      fileCount: 6,
      breakdown: { audio: { size: 700, count: 3 }, stems: { size: 300, count: 1 }, images: { size: 60, count: 2 }, other: { size: 0, count: 0 }, previews: { size: 0, count: 0 } },
      userCount: 3,
      projectCount: 3,
    },
  });
});

it('answers zeros for a user without uploads, forgets deleted files, and needs authentication', async () => {
  const newcomer = await api.register();
  expect((await stats(newcomer.accessToken)).body).toEqual({
    totalSize: 0,
    fileCount: 0,
    breakdown: { audio: { size: 0, count: 0 }, stems: { size: 0, count: 0 }, images: { size: 0, count: 0 }, other: { size: 0, count: 0 }, previews: { size: 0, count: 0 } },
    quota: null,
  });
  const extra = (await upload(api, bob.token, bob.cutId, 'g.ogg', sampleBytes('ogg', 70))).body;
  expect((await stats(bob.token)).body.totalSize).toBe(470);
  await api.request('DELETE', `/api/files/${extra.id}`, { token: bob.token });
  expect((await stats(bob.token)).body.totalSize).toBe(400);
  expect((await api.request('GET', '/api/files/storage')).status).toBe(401);
});

it('counts project covers and vibe images the caller uploaded as images, in the totals too, and drops a replaced one', async () => {
  const carol = await userWithCut(api);
  const png = (size: number) => Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(size - 8, 7)]);
  const withImage = (bytes: Buffer, fields: Record<string, string> = {}) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('image', new Blob([new Uint8Array(bytes)]), 'art.png');
    return form;
  };
  const put = (path: string, bytes: Buffer) => api.request('PUT', path, { token: carol.token, body: withImage(bytes) });
  expect((await put(`/api/projects/${carol.projectId}`, png(1000))).status).toBe(200);
  expect((await api.request('POST', `/api/projects/${carol.projectId}/vibes`, { token: carol.token, body: withImage(png(300), { name: 'Art' }) })).status).toBe(201);
  expect((await upload(api, carol.token, carol.cutId, 'h.png', sampleBytes('png', 20))).status).toBe(201);

  const own = (await stats(carol.token)).body;
  expect(own).toMatchObject({ totalSize: 1320, fileCount: 3, breakdown: { audio: { size: 0, count: 0 }, images: { size: 1320, count: 3 } } });

  expect((await put(`/api/projects/${carol.projectId}`, png(500))).status).toBe(200);
  expect((await stats(carol.token)).body.breakdown.images).toEqual({ size: 820, count: 3 });
  const site = (await stats(admin.token)).body.site;
  expect(site.breakdown.images).toEqual({ size: 60 + 820, count: 2 + 3 });
  expect(site.totalSize).toBe(1060 + 820);
});

it("gives a token limited to projects only those projects' uploads, and never the site block", async () => {
  const elsewhere = await seedProject(api, admin.token, 'Side project');
  const cover = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(92, 7)]);
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(cover)]), 'cover.png');
  expect((await api.request('PUT', `/api/projects/${elsewhere.id}`, { token: admin.token, body: form })).status).toBe(200);
  expect((await upload(api, admin.token, elsewhere.cutId, 'side.wav', sampleBytes('wav', 700))).status).toBe(201);

  const created = await api.request('POST', '/api/tokens', {
    token: admin.token,
    json: { name: 'side only', scope: 'read', projectIds: [elsewhere.id], expiresIn: 3600 },
  });
  expect(created.status).toBe(201);
  const limited = (await stats(created.body.token)).body;
  expect(limited).toEqual({
    totalSize: 800,
    fileCount: 2,
    breakdown: { audio: { size: 700, count: 1 }, stems: { size: 0, count: 0 }, images: { size: 100, count: 1 }, other: { size: 0, count: 0 }, previews: { size: 0, count: 0 } },
    quota: null,
  });

  const everywhere = await api.request('POST', '/api/tokens', { token: admin.token, json: { name: 'all', scope: 'read', expiresIn: 3600 } });
  const whole = (await stats(everywhere.body.token)).body;
  expect(whole).toMatchObject({ totalSize: 810, fileCount: 3 });
  expect(whole.site).toBeDefined();
});

it("lists a project's largest files to its members, largest first, by type and limit; never a stranger's, nor a deleted file", async () => {
  const largest = (token: string, projectId: string, query = '') => api.request('GET', `/api/projects/${projectId}/largest-files${query}`, { token });
  const listed = await largest(alice.token, alice.projectId);
  expect(listed.status).toBe(200);
  expect(listed.body.map((file: { name: string; size: number; type: string }) => [file.name, file.size, file.type])).toEqual([
    ['c.zip', 300, 'STEM'],
    ['b.flac', 200, 'CUT'],
    ['a.mp3', 100, 'CUT'],
    ['d.png', 50, 'IMAGE'],
  ]);
  expect(listed.body[0]).toMatchObject({ project: { id: alice.projectId }, uploadedBy: { id: alice.user.user.id, email: alice.user.user.email } });
  expect((await largest(alice.token, alice.projectId, '?type=CUT&limit=1')).body.map((file: { name: string }) => file.name)).toEqual(['b.flac']);

  for (const query of ['?limit=0', '?limit=101', '?limit=two', '?type=SONG']) {
    const refused = await largest(alice.token, alice.projectId, query);
    expect(refused.status, query).toBe(400);
    expect(refused.body.code, query).toBe('VALIDATION_FAILED');
    expect(refused.body.errors.map((e: { field: string }) => e.field), query).toEqual([query.slice(1).split('=')[0]]);
  }
  expect((await largest(bob.token, alice.projectId)).status).toBe(404);

  const gone = await upload(api, alice.token, alice.cutId, 'g.wav', sampleBytes('wav', 1000));
  expect((await largest(alice.token, alice.projectId, '?limit=1')).body[0].name).toBe('g.wav');
  expect((await api.request('DELETE', `/api/files/${gone.body.id}`, { token: alice.token })).status).toBe(200);
  expect((await largest(alice.token, alice.projectId, '?limit=1')).body[0].name).toBe('c.zip');
});
