import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, type Api, expectStatus, PNG_BYTES, seedProject, type User } from './authz/fixture.js';
import { openEventSocket, refusedUpgrade } from './support/event-socket.js';
import { sampleBytes, upload } from './support/files.js';
import { client } from './support/http.js';
import { runServerCommand } from './support/process.js';
import { startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
let api: Api;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
  await api.register({ name: 'Site Admin' });
});
afterAll(() => server?.close());

const AVATAR_URL = /^\/uploads\/avatars\/[0-9a-f-]{36}\.png$/;
const avatarStored = (url: string) => server.stored.exists(`images/${url.split('/').pop()!}`);

function imageForm(bytes: Buffer, fileName = 'me.png'): FormData {
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(bytes)]), fileName);
  return form;
}

const me = (user: User) => api.request('GET', '/api/auth/me', { token: user.accessToken });

/** Signs in again as `user`: a second session of the same account. */
async function secondSession(user: User, password = user.password) {
  return expectStatus(api.request('POST', '/api/auth/login', { json: { email: user.user.email, password } }), 200);
}

describe('PUT /api/auth/me', () => {
  it('renames the caller, answers the me record, and the projects hear it as member.updated', async () => {
    const owner = await api.register({ name: 'Owner' });
    const singer = await api.register({ name: 'Singer' });
    const project = await seedProject(api, owner.accessToken);
    await addMember(api, owner.accessToken, project.id, singer);
    const socket = await openEventSocket(server.url, { token: owner.accessToken });
    try {
      const renamed = await expectStatus(api.request('PUT', '/api/auth/me', { token: singer.accessToken, json: { name: '  Lead Singer ' } }), 200);
      expect(renamed).toMatchObject({ id: singer.user.id, email: singer.user.email, name: 'Lead Singer', avatarUrl: null });
      const event = await socket.waitFor((e) => e.type === 'member.updated');
      expect(event).toMatchObject({ projectId: project.id, actor: { id: singer.user.id, name: 'Lead Singer' } });
      expect(event.data).toMatchObject({ member: { userId: singer.user.id, name: 'Lead Singer', role: 'MEMBER' } });
    } finally {
      socket.close();
    }
    const detail = await expectStatus(api.request('GET', `/api/projects/${project.id}`, { token: owner.accessToken }), 200);
    expect(detail.members.find((m: { userId: string }) => m.userId === singer.user.id).name).toBe('Lead Singer');
  });

  it('refuses a name that is empty or has control characters', async () => {
    const user = await api.register();
    for (const name of ['   ', 'a\u0007b']) {
      const refused = await api.request('PUT', '/api/auth/me', { token: user.accessToken, json: { name } });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('VALIDATION_FAILED');
    }
  });
});

describe('avatars', () => {
  it('sets an avatar served to any signed-in user, counts it in storage, replaces and clears it with its bytes', async () => {
    const user = await api.register({ name: 'Drummer' });
    const stranger = await api.register();
    const set = await expectStatus(api.request('PUT', '/api/auth/me/avatar', { token: user.accessToken, body: imageForm(PNG_BYTES) }), 200);
    expect(set.avatarUrl).toMatch(AVATAR_URL);
    expect((await me(user)).body.avatarUrl).toBe(set.avatarUrl);

    const served = await api.request('GET', set.avatarUrl, { token: stranger.accessToken });
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('content-length')).toBe(String(PNG_BYTES.length));
    expect((await api.request('GET', set.avatarUrl)).status).toBe(401);
    expect((await api.request('GET', '/uploads/avatars/00000000-0000-0000-0000-000000000000.png', { token: user.accessToken })).status).toBe(404);

    const storage = await expectStatus(api.request('GET', '/api/files/storage', { token: user.accessToken }), 200);
    expect(storage.breakdown.images).toEqual({ size: PNG_BYTES.length, count: 1 });
    expect(storage.totalSize).toBe(PNG_BYTES.length);

    const replaced = await expectStatus(api.request('PUT', '/api/auth/me/avatar', { token: user.accessToken, body: imageForm(PNG_BYTES) }), 200);
    expect(replaced.avatarUrl).not.toBe(set.avatarUrl);
    expect(await avatarStored(set.avatarUrl)).toBe(false);
    expect((await api.request('GET', set.avatarUrl, { token: stranger.accessToken })).status).toBe(404);

    const cleared = await expectStatus(api.request('DELETE', '/api/auth/me/avatar', { token: user.accessToken }), 200);
    expect(cleared.avatarUrl).toBeNull();
    expect(await avatarStored(replaced.avatarUrl)).toBe(false);
    const after = await expectStatus(api.request('GET', '/api/files/storage', { token: user.accessToken }), 200);
    expect(after.breakdown.images).toEqual({ size: 0, count: 0 });
  });

  it('shows in the member list and the uploader of files', async () => {
    const user = await api.register();
    const project = await seedProject(api, user.accessToken);
    await expectStatus(upload(api, user.accessToken, project.cutId, 'take.mp3', sampleBytes('mp3')), 201);
    const { avatarUrl } = await expectStatus(api.request('PUT', '/api/auth/me/avatar', { token: user.accessToken, body: imageForm(PNG_BYTES) }), 200);
    const detail = await expectStatus(api.request('GET', `/api/projects/${project.id}`, { token: user.accessToken }), 200);
    expect(detail.members[0].avatarUrl).toBe(avatarUrl);
    expect(detail.vibes[0].cuts[0].files[0].uploadedBy).toEqual({ id: user.user.id, name: user.user.name, avatarUrl });
  });

  it('refuses what is not an image (415), an image over 5 MiB (413) and a form without one (400), storing nothing', async () => {
    const user = await api.register();
    const text = await api.request('PUT', '/api/auth/me/avatar', { token: user.accessToken, body: imageForm(Buffer.from('not an image at all'), 'me.png') });
    expect(text.status).toBe(415);
    expect(text.body.code).toBe('UNSUPPORTED_FILE_TYPE');
    const large = Buffer.concat([PNG_BYTES, Buffer.alloc(5 * 1024 * 1024)]);
    const tooLarge = await api.request('PUT', '/api/auth/me/avatar', { token: user.accessToken, body: imageForm(large) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.code).toBe('FILE_TOO_LARGE');
    const form = new FormData();
    form.append('name', 'no image');
    const missing = await api.request('PUT', '/api/auth/me/avatar', { token: user.accessToken, body: form });
    expect(missing.status).toBe(400);
    const json = await api.request('PUT', '/api/auth/me/avatar', { token: user.accessToken, json: {} });
    expect(json.status).toBe(415);
    expect((await me(user)).body.avatarUrl).toBeNull();
    expect(await server.sql`select 1 from stored_images where uploaded_by = ${user.user.id}`).toHaveLength(0);
  });
});

describe('POST /api/auth/password', () => {
  it('ends every other session, its access and refresh tokens at once, and keeps the caller signed in', async () => {
    const user = await api.register();
    const other = await secondSession(user);
    expect((await api.request('GET', '/api/auth/me', { token: other.accessToken })).status).toBe(200);

    const changed = await api.request('POST', '/api/auth/password', {
      token: user.accessToken,
      json: { currentPassword: user.password, newPassword: 'a new long password' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ ok: true, revokedTokens: 0, tokens: [] });

    const stale = await api.request('GET', '/api/auth/me', { token: other.accessToken });
    expect(stale.status).toBe(401);
    expect(stale.body.code).toBe('UNAUTHENTICATED');
    expect((await api.request('POST', '/api/auth/refresh', { json: { refreshToken: other.refreshToken } })).status).toBe(401);
    expect((await me(user)).status).toBe(200);
    expect((await api.request('POST', '/api/auth/refresh', { json: { refreshToken: user.refreshToken } })).status).toBe(200);

    expect((await api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: user.password } })).status).toBe(401);
    await secondSession(user, 'a new long password');
  });

  it('lists the personal access tokens that still work, and revokes them all with revokeTokens', async () => {
    const user = await api.register();
    const createToken = (name: string) =>
      expectStatus(api.request('POST', '/api/tokens', { token: user.accessToken, json: { name, scope: 'read', expiresIn: 3600 } }), 201);
    const ci = await createToken('CI');
    const laptop = await createToken('laptop');

    const kept = await expectStatus(
      api.request('POST', '/api/auth/password', { token: user.accessToken, json: { currentPassword: user.password, newPassword: 'second long password' } }),
      200,
    );
    expect(kept.revokedTokens).toBe(0);
    expect(kept.tokens.map((token: { name: string }) => token.name)).toEqual(['laptop', 'CI']);
    expect((await api.request('GET', '/api/auth/me', { token: ci.token })).status).toBe(200);

    const revoked = await expectStatus(
      api.request('POST', '/api/auth/password', {
        token: user.accessToken,
        json: { currentPassword: 'second long password', newPassword: 'third long password', revokeTokens: true },
      }),
      200,
    );
    expect(revoked).toEqual({ ok: true, revokedTokens: 2, tokens: [] });
    for (const token of [ci, laptop]) expect((await api.request('GET', '/api/auth/me', { token: token.token })).status).toBe(401);
  });

  it('refuses a wrong current password with 401 INVALID_CREDENTIALS and a missing one with 400, changing nothing', async () => {
    const user = await api.register();
    const wrong = await api.request('POST', '/api/auth/password', {
      token: user.accessToken,
      json: { currentPassword: 'not the password', newPassword: 'a new long password' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('INVALID_CREDENTIALS');
    const missing = await api.request('POST', '/api/auth/password', { token: user.accessToken, json: { newPassword: 'a new long password' } });
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual([{ field: 'currentPassword', message: 'is required' }]);
    const short = await api.request('POST', '/api/auth/password', { token: user.accessToken, json: { currentPassword: user.password, newPassword: 'short' } });
    expect(short.status).toBe(400);
    await secondSession(user);
  });

  it('counts wrong current passwords as failed logins of the email', async () => {
    const limited = await startTestServer({ LOGIN_MAX_FAILURES: '2' });
    try {
      const limitedApi = client(limited.url);
      const user = await limitedApi.register();
      const attempt = () =>
        limitedApi.request('POST', '/api/auth/password', { token: user.accessToken, json: { currentPassword: 'wrong password', newPassword: 'a new long password' } });
      expect((await attempt()).status).toBe(401);
      expect((await attempt()).status).toBe(401);
      const third = await attempt();
      expect(third.status).toBe(429);
      expect(third.body.code).toBe('RATE_LIMITED');
    } finally {
      await limited.close();
    }
  });

  it('lets an account without a password (identity provider) set its first one without currentPassword', async () => {
    const user = await api.register();
    await server.sql`update users set password_hash = null where id = ${user.user.id}`;
    await expectStatus(api.request('POST', '/api/auth/password', { token: user.accessToken, json: { newPassword: 'my first password' } }), 200);
    await secondSession(user, 'my first password');
  });
});

describe('DELETE /api/auth/me', () => {
  it('with the trash off, deletes the sole projects with their bytes at once', async () => {
    const forGood = await startTestServer({ TRASH_RETENTION_DAYS: '0' });
    try {
      const forGoodApi = client(forGood.url);
      const leaver = await forGoodApi.register({ name: 'Leaver' });
      const own = await seedProject(forGoodApi, leaver.accessToken, 'Solo');
      const ownFile = await expectStatus(upload(forGoodApi, leaver.accessToken, own.cutId, 'solo.mp3', sampleBytes('mp3')), 201);
      await expectStatus(forGoodApi.request('DELETE', '/api/auth/me', { token: leaver.accessToken, json: { password: leaver.password } }), 200);
      expect(await forGood.sql`select 1 from public.projects where id = ${own.id}`).toHaveLength(0);
      expect(await forGood.stored.exists(`files/${ownFile.id}.mp3`)).toBe(false);
    } finally {
      await forGood.close();
    }
  });

  it('deletes the account: its tokens die at once, sole projects go to the trash, shared files stay as a former member\'s', async () => {
    const leaver = await api.register({ name: 'Leaver' });
    const bandleader = await api.register({ name: 'Bandleader' });
    const drummer = await api.register({ name: 'Drummer' });
    const other = await secondSession(leaver);
    const own = await seedProject(api, leaver.accessToken, 'Solo');
    const ownFile = await expectStatus(upload(api, leaver.accessToken, own.cutId, 'solo.mp3', sampleBytes('mp3')), 201);
    const shared = await seedProject(api, bandleader.accessToken, 'Band');
    await addMember(api, bandleader.accessToken, shared.id, leaver);
    await addMember(api, bandleader.accessToken, shared.id, drummer);
    const sharedFile = await expectStatus(upload(api, leaver.accessToken, shared.cutId, 'take.mp3', sampleBytes('mp3')), 201);
    const { avatarUrl } = await expectStatus(api.request('PUT', '/api/auth/me/avatar', { token: leaver.accessToken, body: imageForm(PNG_BYTES) }), 200);
    const leaverSocket = await openEventSocket(server.url, { token: leaver.accessToken });
    const leaderSocket = await openEventSocket(server.url, { token: bandleader.accessToken });
    try {
      const wrong = await api.request('DELETE', '/api/auth/me', { token: leaver.accessToken, json: { password: 'not it at all' } });
      expect(wrong.status).toBe(401);
      expect(wrong.body.code).toBe('INVALID_CREDENTIALS');

      const deleted = await api.request('DELETE', '/api/auth/me', { token: leaver.accessToken, json: { password: leaver.password } });
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ id: leaver.user.id, deleted: true });

      expect((await leaverSocket.closed).code).toBe(4401);
      const removed = await leaderSocket.waitFor((e) => e.type === 'member.removed');
      expect(removed).toMatchObject({ projectId: shared.id, data: { userId: leaver.user.id } });
    } finally {
      leaverSocket.close();
      leaderSocket.close();
    }

    for (const token of [leaver.accessToken, other.accessToken]) {
      expect((await api.request('GET', '/api/auth/me', { token })).status).toBe(401);
    }
    for (const refreshToken of [leaver.refreshToken, other.refreshToken]) {
      expect((await api.request('POST', '/api/auth/refresh', { json: { refreshToken } })).status).toBe(401);
    }
    expect((await api.request('POST', '/api/auth/login', { json: { email: leaver.user.email, password: leaver.password } })).status).toBe(401);

    // The sole project is in the trash like any deleted project: invisible, its bytes kept until it is purged.
    expect(await server.sql`select 1 from public.projects where id = ${own.id} and trash_id is null`).toHaveLength(0);
    const [entry] = await server.sql<{ deleted_by: string | null; days: number }[]>`
      select deleted_by, round(extract(epoch from trashed_until - trashed_at) / 86400)::int as days from public.trash where kind = 'project' and thing_id = ${own.id}`;
    expect(entry).toEqual({ deleted_by: null, days: 30 });
    expect(await server.stored.exists(`files/${ownFile.id}.mp3`)).toBe(true);
    expect(await avatarStored(avatarUrl)).toBe(false);

    const kept = await expectStatus(api.request('GET', `/api/files/${sharedFile.id}`, { token: bandleader.accessToken }), 200);
    expect(kept.uploadedBy).toEqual({ id: null, name: 'Former member', avatarUrl: null });
    const download = await api.request('GET', `/api/files/${sharedFile.id}/download`, { token: bandleader.accessToken });
    expect(download.status).toBe(200);
    expect(download.text).toBe(sampleBytes('mp3').toString());
    const detail = await expectStatus(api.request('GET', `/api/projects/${shared.id}`, { token: bandleader.accessToken }), 200);
    expect(detail.members.map((m: { name: string }) => m.name)).toEqual(['Bandleader', 'Drummer']);
    // A former member's work is not anyone's to delete sideways: only a project ADMIN may.
    expect((await api.request('DELETE', `/api/files/${sharedFile.id}`, { token: drummer.accessToken })).status).toBe(403);
    expect((await api.request('DELETE', `/api/cuts/${shared.cutId}`, { token: drummer.accessToken })).status).toBe(403);
    expect((await api.request('DELETE', `/api/vibes/${shared.vibeId}`, { token: drummer.accessToken })).status).toBe(403);

    // The email is free again: a new account starts from nothing.
    const again = await api.register({ email: leaver.user.email });
    expect(await expectStatus(api.request('GET', '/api/projects', { token: again.accessToken }), 200)).toEqual([]);
  });

  it('refuses the last ADMIN of a project that has other members (409 LAST_ADMIN), deleting nothing', async () => {
    const admin = await api.register();
    const member = await api.register();
    const project = await seedProject(api, admin.accessToken, 'Kept');
    await addMember(api, admin.accessToken, project.id, member);
    const refused = await api.request('DELETE', '/api/auth/me', { token: admin.accessToken, json: { password: admin.password } });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('LAST_ADMIN');
    expect(refused.body.detail).toContain('"Kept"');
    expect((await me(admin)).status).toBe(200);

    await expectStatus(api.request('PUT', `/api/projects/${project.id}/members/${member.user.id}`, { token: admin.accessToken, json: { role: 'ADMIN' } }), 200);
    await expectStatus(api.request('DELETE', '/api/auth/me', { token: admin.accessToken, json: { password: admin.password } }), 200);
    const detail = await expectStatus(api.request('GET', `/api/projects/${project.id}`, { token: member.accessToken }), 200);
    expect(detail.members.map((m: { userId: string }) => m.userId)).toEqual([member.user.id]);
  });

  it('needs a signed-in caller', async () => {
    const anonymous = await api.request('DELETE', '/api/auth/me', { json: { password: 'whatever it is' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('UNAUTHENTICATED');
  });

  it('asks an account without a password to confirm with its email', async () => {
    const user = await api.register();
    await server.sql`update users set password_hash = null where id = ${user.user.id}`;
    const wrong = await api.request('DELETE', '/api/auth/me', { token: user.accessToken, json: { confirm: 'someone@else.example' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0].field).toBe('confirm');
    await expectStatus(api.request('DELETE', '/api/auth/me', { token: user.accessToken, json: { confirm: user.user.email.toUpperCase() } }), 200);
  });
});

describe('reset-password (server command)', () => {
  it('prints a one-time password, ends the sessions and personal access tokens, and forces a change before anything else', async () => {
    const user = await api.register();
    const tokens = [];
    for (const name of ['CI', 'deploy']) {
      tokens.push(await expectStatus(api.request('POST', '/api/tokens', { token: user.accessToken, json: { name, scope: 'write', expiresIn: 3600 } }), 201));
    }
    const reset = await runServerCommand(['reset-password', user.user.email], server.env);
    expect(reset.code, reset.stderr).toBe(0);
    const oneTime = reset.stdout.trim();
    expect(oneTime).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(reset.stderr).toContain('2 personal access token(s) were revoked');
    for (const token of tokens) expect((await api.request('GET', '/api/projects', { token: token.token })).status).toBe(401);

    expect((await me(user)).status).toBe(401);
    expect((await api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: user.password } })).status).toBe(401);

    const signedIn = await secondSession(user, oneTime);
    for (const [method, path] of [['GET', '/api/auth/me'], ['GET', '/api/projects'], ['GET', '/api/files/storage']] as const) {
      const blocked = await api.request(method, path, { token: signedIn.accessToken });
      expect(blocked.status, path).toBe(403);
      expect(blocked.body.code).toBe('PASSWORD_CHANGE_REQUIRED');
    }
    const projectCreate = await api.request('POST', '/api/projects', { token: signedIn.accessToken, json: { name: 'No' } });
    expect(projectCreate.body.code).toBe('PASSWORD_CHANGE_REQUIRED');
    const upgrade = await refusedUpgrade(server.url, { token: signedIn.accessToken });
    expect(upgrade.status).toBe(403);
    expect(upgrade.body.code).toBe('PASSWORD_CHANGE_REQUIRED');

    await expectStatus(
      api.request('POST', '/api/auth/password', { token: signedIn.accessToken, json: { currentPassword: oneTime, newPassword: 'chosen by me now' } }),
      200,
    );
    expect((await api.request('GET', '/api/auth/me', { token: signedIn.accessToken })).status).toBe(200);
    await secondSession(user, 'chosen by me now');
  });

  it('exits 1 for an unknown email', async () => {
    const result = await runServerCommand(['reset-password', 'nobody@example.com'], server.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No user with email nobody@example.com');
  });
});
