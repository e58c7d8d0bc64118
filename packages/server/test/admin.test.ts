import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, ISO_TIMESTAMP } from './authz/fixture.js';
import { openEventSocket } from './support/event-socket.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { runServerCommand } from './support/process.js';
import { startTestServer, type TestServer } from './support/server.js';
import { until } from './support/until.js';

// The site ADMIN's view of storage by user and by project, the account list, and deactivation (API and
// server commands). One server: the first account registered is the site ADMIN.

let server: TestServer;
let api: ReturnType<typeof client>;
let admin: Awaited<ReturnType<typeof userWithCut>>;
let alice: Awaited<ReturnType<typeof userWithCut>>;
let bob: Awaited<ReturnType<typeof userWithCut>>;
const QUOTA = 1024 * 1024;
const TUS = { 'tus-resumable': '1.0.0' };
const zero = { size: 0, count: 0 };

beforeAll(async () => {
  server = await startTestServer({ USER_QUOTA_MB: '1' });
  api = client(server.url);
  admin = await userWithCut(api);
  alice = await userWithCut(api);
  bob = await userWithCut(api);
  expect(admin.user.user.role).toBe('ADMIN');
  for (const [owner, fileName, size] of [[alice, 'a.mp3', 100], [alice, 'c.zip', 300], [alice, 'd.png', 50], [bob, 'e.wav', 400]] as const) {
    await expectStatus(upload(api, owner.token, owner.cutId, fileName, sampleBytes(fileName.split('.')[1]!, size)), 201);
  }
  // An upload Alice started and has not finished: 100 of 1000 bytes.
  const metadata = `cutId ${Buffer.from(alice.cutId).toString('base64')},filename ${Buffer.from('long.wav').toString('base64')}`;
  const created = await api.request('POST', '/api/uploads', { token: alice.token, headers: { ...TUS, 'upload-length': '1000', 'upload-metadata': metadata } });
  expect(created.status).toBe(201);
  const patched = await api.request('PATCH', created.headers.get('location')!, {
    token: alice.token,
    body: new Uint8Array(sampleBytes('wav', 1000).subarray(0, 100)),
    headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
  });
  expect(patched.status).toBe(204);
});
afterAll(() => server?.close());

const storage = (query: string, token = admin.token) => api.request('GET', `/api/admin/storage?${query}`, { token });
const login = (email: string, password: string) => api.request('POST', '/api/auth/login', { json: { email, password } });

describe('GET /api/admin/storage', () => {
  it("by=user: every account's bytes by type, quota use and incomplete uploads, most bytes first", async () => {
    const body = await expectStatus(storage('by=user'), 200);
    expect(body.by).toBe('user');
    expect(body.largestFiles).toEqual([]);
    expect(body.users.map((row: { user: { id: string } }) => row.user.id)).toEqual([alice.user.user.id, bob.user.user.id, admin.user.user.id]);
    expect(body.users[0]).toEqual({
      user: {
        id: alice.user.user.id,
        email: alice.user.user.email,
        name: alice.user.user.name,
        role: 'MEMBER',
        active: true,
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
        deactivatedAt: null,
        lastSignInAt: expect.stringMatching(ISO_TIMESTAMP),
      },
      totalSize: 450,
      fileCount: 3,
      breakdown: { audio: { size: 100, count: 1 }, stems: { size: 300, count: 1 }, images: { size: 50, count: 1 }, other: { size: 0, count: 0 }, previews: { size: 0, count: 0 } },
      quota: { limitBytes: QUOTA, usedBytes: 450 },
      incompleteUploads: { count: 1, receivedBytes: 100, lengthBytes: 1000 },
    });
    expect(body.users[2]).toMatchObject({ totalSize: 0, fileCount: 0, breakdown: { audio: zero, stems: zero, images: zero }, incompleteUploads: { count: 0, receivedBytes: 0, lengthBytes: 0 } });
  });

  it("by=project: every project's files of all members, and the incomplete uploads into its cuts", async () => {
    const body = await expectStatus(storage('by=project'), 200);
    expect(body.by).toBe('project');
    expect(body.projects.map((row: { project: { id: string } }) => row.project.id)).toEqual([alice.projectId, bob.projectId, admin.projectId]);
    expect(body.projects[0]).toEqual({
      project: { id: alice.projectId, name: 'Project' },
      totalSize: 450,
      fileCount: 3,
      breakdown: { audio: { size: 100, count: 1 }, stems: { size: 300, count: 1 }, images: { size: 50, count: 1 }, other: { size: 0, count: 0 }, previews: { size: 0, count: 0 } },
      incompleteUploads: { count: 1, receivedBytes: 100, lengthBytes: 1000 },
    });
    expect(body.projects[1]).toMatchObject({ totalSize: 400, breakdown: { audio: { size: 400, count: 1 } }, incompleteUploads: { count: 0 } });
  });

  it('top=N: the N largest files of the site, largest first, with project and uploader', async () => {
    const body = await expectStatus(storage('by=project&top=2'), 200);
    expect(body.largestFiles).toEqual([
      {
        id: expect.any(String),
        name: 'e.wav',
        type: 'CUT',
        size: 400,
        project: { id: bob.projectId, name: 'Project' },
        uploadedBy: { id: bob.user.user.id, email: bob.user.user.email },
        createdAt: expect.stringMatching(ISO_TIMESTAMP),
      },
      expect.objectContaining({ name: 'c.zip', type: 'STEM', size: 300, uploadedBy: { id: alice.user.user.id, email: alice.user.user.email } }),
    ]);
  });

  it('refuses a bad query (400), a MEMBER (403 FORBIDDEN), and a site ADMIN token limited to projects (403 INSUFFICIENT_SCOPE)', async () => {
    for (const query of ['', 'by=cut', 'by=user&top=0', 'by=user&top=x']) expect((await storage(query)).status, query).toBe(400);
    const member = await storage('by=user', alice.token);
    expect([member.status, member.body.code]).toEqual([403, 'FORBIDDEN']);
    const limited = await expectStatus(
      api.request('POST', '/api/tokens', { token: admin.token, json: { name: 'one project', scope: 'read', expiresIn: 3600, projectIds: [admin.projectId] } }),
      201,
    );
    const scoped = await storage('by=user', limited.token);
    expect([scoped.status, scoped.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    const reader = await expectStatus(api.request('POST', '/api/tokens', { token: admin.token, json: { name: 'reader', scope: 'read', expiresIn: 3600 } }), 201);
    expect((await storage('by=user', reader.token)).status).toBe(200);
  });

  it('sums past 2^32 bytes exactly, as JSON numbers', async () => {
    const big = await userWithCut(api);
    for (const name of ['x.wav', 'y.wav', 'z.wav']) await expectStatus(upload(api, big.token, big.cutId, name, sampleBytes('wav', 100)), 201);
    await server.sql`update files set size = 3000000001 where uploaded_by = ${big.user.user.id}`;
    const byUser = await expectStatus(storage('by=user&top=1'), 200);
    expect(byUser.users[0]).toMatchObject({ user: { id: big.user.user.id }, totalSize: 9000000003, breakdown: { audio: { size: 9000000003, count: 3 } } });
    expect(byUser.largestFiles[0].size).toBe(3000000001);
    const byProject = await expectStatus(storage('by=project'), 200);
    expect(byProject.projects[0]).toMatchObject({ project: { id: big.projectId }, totalSize: 9000000003 });
    await server.sql`delete from files where uploaded_by = ${big.user.user.id}`;
  });
});

describe('GET /api/admin/users, PUT /api/admin/users/:id/active', () => {
  it('lists every account by email, for a site ADMIN only', async () => {
    const list = await expectStatus(api.request('GET', '/api/admin/users', { token: admin.token }), 200);
    const emails = list.map((user: { email: string }) => user.email);
    expect(emails).toEqual([...emails].sort());
    expect(list.find((user: { id: string }) => user.id === bob.user.user.id)).toMatchObject({ email: bob.user.user.email, role: 'MEMBER', active: true, deactivatedAt: null });
    expect((await api.request('GET', '/api/admin/users', { token: bob.token })).status).toBe(403);
  });

  it('deactivating refuses sign-in and ends sessions, refresh and personal access tokens and their sockets at once; files stay', async () => {
    const carol = await userWithCut(api);
    await expectStatus(upload(api, carol.token, carol.cutId, 'kept.mp3', sampleBytes('mp3', 120)), 201);
    const pat = await expectStatus(api.request('POST', '/api/tokens', { token: carol.token, json: { name: 'CI', scope: 'write', expiresIn: 3600 } }), 201);
    const sockets = await Promise.all([openEventSocket(server.url, { token: carol.token }), openEventSocket(server.url, { token: pat.token })]);

    const answer = await expectStatus(api.request('PUT', `/api/admin/users/${carol.user.user.id}/active`, { token: admin.token, json: { active: false } }), 200);
    expect(answer).toMatchObject({ id: carol.user.user.id, active: false, deactivatedAt: expect.stringMatching(ISO_TIMESTAMP) });

    // At once on this instance: its caches forget them in the same request, before any notice arrives.
    expect((await api.request('GET', '/api/auth/me', { token: carol.token })).status).toBe(401);
    expect((await api.request('GET', '/api/auth/me', { token: pat.token })).status).toBe(401);
    for (const socket of sockets) expect((await socket.closed).code).toBe(4401);
    expect((await api.request('POST', '/api/auth/refresh', { json: { refreshToken: carol.user.refreshToken } })).status).toBe(401);
    const refused = await login(carol.user.user.email, carol.user.password);
    expect([refused.status, refused.body.code, refused.body.detail]).toEqual([403, 'FORBIDDEN', expect.stringContaining('deactivated')]);
    const wrong = await login(carol.user.user.email, 'not the password at all');
    expect([wrong.status, wrong.body.code]).toEqual([401, 'INVALID_CREDENTIALS']);

    const kept = await expectStatus(storage('by=project'), 200);
    expect(kept.projects.find((row: { project: { id: string } }) => row.project.id === carol.projectId).totalSize).toBe(120);

    const again = await expectStatus(api.request('PUT', `/api/admin/users/${carol.user.user.id}/active`, { token: admin.token, json: { active: true } }), 200);
    expect(again).toMatchObject({ active: true, deactivatedAt: null });
    await expectStatus(login(carol.user.user.email, carol.user.password), 200);
    expect((await api.request('GET', '/api/auth/me', { token: pat.token })).status).toBe(401);
  });

  it("suspends the account's share links while it is deactivated (404, no comments), lists them, and activation restores them", async () => {
    const frank = await userWithCut(api);
    const file = await expectStatus(upload(api, frank.token, frank.cutId, 'mix.mp3', sampleBytes('mp3', 120)), 201);
    const link = await expectStatus(api.request('POST', `/api/files/${file.id}/share`, { token: frank.token, json: { allowComments: true } }), 201);
    const cutLink = await expectStatus(api.request('POST', `/api/cuts/${frank.cutId}/share`, { token: frank.token, json: {} }), 201);
    const open = (token: string) => api.request('GET', `/api/share/${token}`, { headers: { accept: 'application/json' } });
    const comment = () => api.request('POST', `/api/share/${link.token}/comments`, { json: { name: 'Label', body: 'Louder' } });
    expect((await open(link.token)).status).toBe(200);

    const off = await expectStatus(api.request('PUT', `/api/admin/users/${frank.user.user.id}/active`, { token: admin.token, json: { active: false } }), 200);
    expect(off.shareLinks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'file', targetId: file.id, name: 'mix.mp3', projectId: frank.projectId }),
        expect.objectContaining({ kind: 'cut', targetId: frank.cutId, projectId: frank.projectId }),
      ]),
    );
    expect(off.shareLinks).toHaveLength(2);
    for (const token of [link.token, cutLink.token]) expect((await open(token)).status).toBe(404);
    expect((await api.request('GET', `/share/${link.token}`)).status).toBe(404);
    expect((await api.request('GET', `/api/share/${link.token}/comments`)).status).toBe(404);
    expect((await comment()).status).toBe(404);
    expect((await api.request('GET', `/api/share/${cutLink.token}/archive`)).status).toBe(404);

    const on = await expectStatus(api.request('PUT', `/api/admin/users/${frank.user.user.id}/active`, { token: admin.token, json: { active: true } }), 200);
    expect(on.shareLinks).toHaveLength(2);
    for (const token of [link.token, cutLink.token]) expect((await open(token)).status).toBe(200);
    expect((await comment()).status).toBe(201);
  });

  it("refuses a MEMBER (nothing changes), the ADMIN's own account, an unknown user and a read token", async () => {
    const dave = await api.register();
    const path = `/api/admin/users/${dave.user.id}/active`;
    const member = await api.request('PUT', path, { token: alice.token, json: { active: false } });
    expect([member.status, member.body.code]).toEqual([403, 'FORBIDDEN']);
    expect((await api.request('GET', '/api/auth/me', { token: dave.accessToken })).status).toBe(200);
    const self = await api.request('PUT', `/api/admin/users/${admin.user.user.id}/active`, { token: admin.token, json: { active: false } });
    expect([self.status, self.body.code]).toEqual([403, 'FORBIDDEN']);
    expect((await api.request('PUT', '/api/admin/users/00000000-0000-4000-8000-000000000000/active', { token: admin.token, json: { active: false } })).status).toBe(404);
    expect((await api.request('PUT', path, { token: admin.token, json: { active: 'no' } })).status).toBe(400);
    const reader = await expectStatus(api.request('POST', '/api/tokens', { token: admin.token, json: { name: 'reader', scope: 'read', expiresIn: 3600 } }), 201);
    const read = await api.request('PUT', path, { token: reader.token, json: { active: false } });
    expect([read.status, read.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
  });
});

describe('users (server commands)', () => {
  it('users list prints every account; deactivate ends its sessions and tokens; activate lets it sign in again', async () => {
    const erin = await userWithCut(api).then(({ user, ...rest }) => ({ ...user, ...rest }));
    await expectStatus(api.request('POST', '/api/tokens', { token: erin.accessToken, json: { name: 'CI', scope: 'write', expiresIn: 3600 } }), 201);
    const shared = await expectStatus(upload(api, erin.token, erin.cutId, 'shared.mp3', sampleBytes('mp3', 100)), 201);
    await expectStatus(api.request('POST', `/api/files/${shared.id}/share`, { token: erin.token, json: {} }), 201);
    const off = await runServerCommand(['users', 'deactivate', erin.user.email.toUpperCase()], server.env);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain(`${erin.user.email} is deactivated: its sessions ended, and 1 personal access token(s) were revoked`);
    expect(off.stdout).toContain('1 share link(s) suspended while it is deactivated');
    expect(off.stdout).toContain(`file "shared.mp3"`);
    // The running server drops her cached session when PostgreSQL's notice from the command's process arrives
    // (core/session-cache.ts: at most the notify round trip).
    await until('the running server to end her session', async () => (await api.request('GET', '/api/auth/me', { token: erin.accessToken })).status === 401);
    expect((await login(erin.user.email, erin.password)).body).toMatchObject({ code: 'FORBIDDEN', detail: expect.stringContaining('deactivated') });

    const list = await runServerCommand(['users', 'list'], server.env);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toBe('EMAIL\tROLE\tSTATUS\tLAST SIGN-IN\tNAME');
    expect(list.stdout).toContain(`${erin.user.email}\tMEMBER\tdeactivated\t`);
    expect(list.stdout).toContain(`${admin.user.user.email}\tADMIN\tactive\t`);

    const on = await runServerCommand(['users', 'activate', erin.user.email], server.env);
    expect(on.code, on.stderr).toBe(0);
    await expectStatus(login(erin.user.email, erin.password), 200);

    const unknown = await runServerCommand(['users', 'deactivate', 'nobody@example.com'], server.env);
    expect([unknown.code, unknown.stderr]).toEqual([1, 'No user with email nobody@example.com\n']);
  });
});

describe('the jobs server command', () => {
  it('lists the queue (counts, oldest wait, failed jobs with their error on one line) and retries a failed job; exit 1 for a job that is not failed', async () => {
    const [job] = await server.sql<{ id: string }[]>`
      insert into jobs (kind, state, attempts, max_attempts, last_error, finished_at)
      values ('email', 'failed', 8, 8, ${'the receiver said no\nand went away'}, now()) returning id`;
    const list = await runServerCommand(['jobs'], server.env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('email\tfailed\t1\n');
    expect(list.stdout).toMatch(new RegExp(`failed\\t${job!.id}\\temail\\t8/8\\t\\S+\\tthe receiver said no and went away\\n`));
    expect((await runServerCommand(['jobs', 'list'], server.env)).stdout).toBe(list.stdout);

    const retried = await runServerCommand(['jobs', 'retry', job!.id], server.env);
    expect([retried.code, retried.stdout]).toEqual([0, `job ${job!.id} is queued again\n`]);
    const again = await runServerCommand(['jobs', 'retry', job!.id], server.env);
    expect([again.code, again.stderr]).toEqual([1, 'The job is queued: only a failed job is retried\n']);
    expect((await runServerCommand(['jobs', 'retry', 'nope'], server.env)).code).toBe(1);
  });
});
