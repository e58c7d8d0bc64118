import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, type Api, expectStatus, inviteToken, ISO_TIMESTAMP, seedProject, startWithUsers, type User } from './authz/fixture.js';
import { call } from './support/http.js';
import type { TestServer } from './support/server.js';

let server: TestServer;
let api: Api;
let owner: User;
let member: User;

beforeAll(async () => {
  ({ server, api, users: [owner, member] } = await startWithUsers('Owner', 'Member'));
});
afterAll(() => server?.close());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function newProject(name = 'Band'): Promise<string> {
  return (await seedProject(api, owner.accessToken, name)).id;
}

function invite(projectId: string, email: string, role: 'MEMBER' | 'ADMIN' = 'MEMBER') {
  return api.request('POST', `/api/projects/${projectId}/invite`, { token: owner.accessToken, json: { email, role } });
}

/** Invites `email` and answers the token of the link. */
async function invitedToken(projectId: string, email: string, role: 'MEMBER' | 'ADMIN' = 'MEMBER'): Promise<string> {
  return inviteToken((await expectStatus(invite(projectId, email, role), 201)).inviteUrl);
}

const accept = (user: User, token: string) => api.request('POST', '/api/invitations/accept', { token: user.accessToken, json: { token } });
const detail = (projectId: string) => expectStatus(api.request('GET', `/api/projects/${projectId}`, { token: owner.accessToken }), 200);
const memberIds = async (projectId: string) => (await detail(projectId)).members.map((m: { userId: string }) => m.userId);
const freshEmail = (label: string) => `${label}-${randomUUID()}@partner.test`;

describe('POST /api/projects/:id/invite', () => {
  it('answers alike for an email with an account and one without, and adds nobody', async () => {
    const projectId = await newProject();
    const known = await api.register({ name: 'Known' });
    const unknownEmail = freshEmail('unknown');
    const answers = [await invite(projectId, `  ${known.user.email.toUpperCase()} `, 'ADMIN'), await invite(projectId, unknownEmail, 'ADMIN')];

    for (const [answer, email] of [[answers[0]!, known.user.email], [answers[1]!, unknownEmail]] as const) {
      expect(answer.status).toBe(201);
      expect(answer.headers.get('location')).toBe(`/api/projects/${projectId}`);
      expect(answer.body).toEqual({
        status: 'invited',
        invitation: {
          id: expect.any(String),
          email,
          role: 'ADMIN',
          invitedBy: { id: owner.user.id, name: 'Owner' },
          createdAt: expect.stringMatching(ISO_TIMESTAMP),
          expiresAt: expect.stringMatching(ISO_TIMESTAMP),
        },
        inviteUrl: expect.stringMatching(new RegExp(`^${server.config.publicUrl}/invite/[A-Za-z0-9_-]{43}$`)),
        // Email is off on this server: the inviter passes the link on.
        emailed: false,
      });
      const { createdAt, expiresAt } = answer.body.invitation;
      expect(Date.parse(expiresAt) - Date.parse(createdAt)).toBe(30 * 86_400_000);
    }
    expect(await memberIds(projectId)).toEqual([owner.user.id]);
    expect((await api.request('GET', `/api/projects/${projectId}`, { token: known.accessToken })).status).toBe(404);
    expect((await detail(projectId)).invitations.map((i: { email: string }) => i.email)).toEqual([known.user.email, unknownEmail]);
  });

  it('keeps only the SHA-256 of the token, which appears in no other answer', async () => {
    const projectId = await newProject();
    const email = freshEmail('hashed');
    const answer = await expectStatus(invite(projectId, email), 201);
    const token = inviteToken(answer.inviteUrl);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    const [row] = await server.sql`select * from invitations where id = ${answer.invitation.id}`;
    expect(row!.token_hash).toBe(sha256(token));
    expect(JSON.stringify(row)).not.toContain(token);
    expect(JSON.stringify(await detail(projectId))).not.toContain(token);
  });

  it('refuses the email of a member, the ADMIN’s own included, with 409 ALREADY_MEMBER', async () => {
    const projectId = await newProject();
    await addMember(api, owner.accessToken, projectId, member);
    for (const email of [member.user.email, owner.user.email.toUpperCase()]) {
      const response = await invite(projectId, email);
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('ALREADY_MEMBER');
    }
    expect((await detail(projectId)).invitations).toEqual([]);
  });

  it('replaces the invitation of a pending email: new link, role and 30 days; the old link is 404', async () => {
    const projectId = await newProject();
    const email = freshEmail('again');
    const first = await expectStatus(invite(projectId, email, 'MEMBER'), 201);
    await server.sql`update invitations set expires_at = now() + interval '1 day' where id = ${first.invitation.id}`;
    const second = await expectStatus(invite(projectId, email.toUpperCase(), 'ADMIN'), 201);
    expect(second.invitation).toMatchObject({ id: first.invitation.id, email, role: 'ADMIN' });
    expect(Date.parse(second.invitation.expiresAt) - Date.parse(second.invitation.createdAt)).toBe(30 * 86_400_000);
    expect(second.inviteUrl).not.toBe(first.inviteUrl);
    expect((await detail(projectId)).invitations).toEqual([second.invitation]);

    expect((await api.request('GET', `/api/invitations/${inviteToken(first.inviteUrl)}`)).status).toBe(404);
    const invitee = await api.register({ email });
    expect((await accept(invitee, inviteToken(first.inviteUrl))).status).toBe(404);
    const joined = await expectStatus(accept(invitee, inviteToken(second.inviteUrl)), 200);
    expect(joined.member.role).toBe('ADMIN');
  });
});

describe('the takeover of issue 11', () => {
  it('gives a stranger who registers the invited email nothing, refuses the link to another email, admits the invited one', async () => {
    const projectId = await newProject('Unreleased');
    const email = freshEmail('dave');
    const token = await invitedToken(projectId, email.replace('dave', 'Dave'), 'ADMIN');

    // Registering the address joins nothing: the email alone proves nothing.
    const dave = await api.register({ email, name: 'Dave?' });
    expect(await memberIds(projectId)).toEqual([owner.user.id]);
    expect((await api.request('GET', '/api/projects', { token: dave.accessToken })).body).toEqual([]);

    // The link in the hands of another account: 403, and the invitation stays pending.
    const mallory = await api.register({ name: 'Mallory' });
    const refused = await accept(mallory, token);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('INVITATION_EMAIL_MISMATCH');
    expect((await detail(projectId)).invitations.map((i: { email: string }) => i.email)).toEqual([email]);
    expect((await api.request('GET', `/api/invitations/${token}`)).status).toBe(200);
    expect(await memberIds(projectId)).toEqual([owner.user.id]);

    // The invited email with the link joins, with the role of the invitation, and uses the link up.
    const joined = await accept(dave, token);
    expect(joined.status).toBe(200);
    expect(joined.body).toEqual({
      projectId,
      member: { userId: dave.user.id, email, name: 'Dave?', avatarUrl: null, role: 'ADMIN', joinedAt: expect.stringMatching(ISO_TIMESTAMP) },
    });
    expect(await memberIds(projectId)).toEqual([owner.user.id, dave.user.id]);
    expect((await detail(projectId)).invitations).toEqual([]);
    expect((await accept(dave, token)).status).toBe(404);
    expect((await accept(mallory, token)).status).toBe(404);
  });
});

describe('GET /api/invitations/:token', () => {
  it('shows, without an account, the project, who invited, the role and the expiry (not the email)', async () => {
    const projectId = await newProject('Night Drive');
    const answer = await expectStatus(invite(projectId, freshEmail('view'), 'ADMIN'), 201);
    const response = await call(server.url, 'GET', `/api/invitations/${inviteToken(answer.inviteUrl)}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ projectName: 'Night Drive', invitedBy: { name: 'Owner' }, role: 'ADMIN', expiresAt: answer.invitation.expiresAt });
  });

  it('is 404 for an unknown token', async () => {
    for (const token of [randomBytes(32).toString('base64url'), 'x', 'accept']) {
      const response = await call(server.url, 'GET', `/api/invitations/${token}`);
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    }
  });
});

describe('POST /api/invitations/accept', () => {
  it('is 404 for unknown, revoked, used and expired links', async () => {
    const projectId = await newProject();
    const invitee = await api.register();
    const unknown = randomBytes(32).toString('base64url');

    const revoked = await expectStatus(invite(projectId, invitee.user.email), 201);
    await expectStatus(api.request('DELETE', `/api/projects/${projectId}/invitations/${revoked.invitation.id}`, { token: owner.accessToken }), 200);
    const revokedToken = inviteToken(revoked.inviteUrl);

    const expiredToken = await invitedToken(await newProject('Expired'), invitee.user.email);
    await server.sql`update invitations set expires_at = now() - interval '1 second' where token_hash = ${sha256(expiredToken)}`;

    const usedToken = await invitedToken(await newProject('Used'), invitee.user.email);
    await expectStatus(accept(invitee, usedToken), 200);

    for (const token of [unknown, revokedToken, expiredToken, usedToken]) {
      const response = await accept(invitee, token);
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
      expect((await call(server.url, 'GET', `/api/invitations/${token}`)).status).toBe(404);
    }
    expect(await memberIds(projectId)).toEqual([owner.user.id]);
  });

  it('neither lists nor admits through an expired invitation', async () => {
    const projectId = await newProject();
    const invitee = await api.register();
    const token = await invitedToken(projectId, invitee.user.email);
    await server.sql`update invitations set expires_at = now() - interval '1 second' where token_hash = ${sha256(token)}`;
    expect((await detail(projectId)).invitations).toEqual([]);
    expect((await accept(invitee, token)).status).toBe(404);
    expect((await api.request('GET', `/api/projects/${projectId}`, { token: invitee.accessToken })).status).toBe(404);
  });

  it('answers a caller who already is a member 409 ALREADY_MEMBER and uses the invitation up', async () => {
    const projectId = await newProject();
    const invitee = await api.register();
    const token = await invitedToken(projectId, invitee.user.email, 'ADMIN');
    // Joined meanwhile by another way (an identity provider that vouches for the email).
    await server.sql`insert into project_members (project_id, user_id, role) values (${projectId}, ${invitee.user.id}, 'MEMBER')`;
    const response = await accept(invitee, token);
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('ALREADY_MEMBER');
    expect(await server.sql`select 1 from invitations where project_id = ${projectId}`).toHaveLength(0);
    expect((await detail(projectId)).members.find((m: { userId: string }) => m.userId === invitee.user.id).role).toBe('MEMBER');
  });

  it('admits one of two simultaneous acceptances of a link', async () => {
    const projectId = await newProject();
    const invitee = await api.register();
    const token = await invitedToken(projectId, invitee.user.email);
    const statuses = (await Promise.all([accept(invitee, token), accept(invitee, token)])).map((r) => r.status);
    expect(statuses.sort()).toEqual([200, 404]);
  });

  it('refuses a missing or non-string token with 400', async () => {
    for (const json of [{}, { token: 1 }, { token: '' }]) {
      const response = await api.request('POST', '/api/invitations/accept', { token: member.accessToken, json });
      expect(response.status).toBe(400);
      expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual(['token']);
    }
  });
});

describe('DELETE /api/projects/:id/invitations/:invitationId', () => {
  it('revokes a pending invitation: gone from the detail, its link 404; then, and for unknown ids, 404', async () => {
    const projectId = await newProject();
    const answer = await expectStatus(invite(projectId, freshEmail('revoked')), 201);
    const path = `/api/projects/${projectId}/invitations/${answer.invitation.id}`;
    const revoked = await api.request('DELETE', path, { token: owner.accessToken });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ id: answer.invitation.id, deleted: true });
    expect((await detail(projectId)).invitations).toEqual([]);
    expect((await call(server.url, 'GET', `/api/invitations/${inviteToken(answer.inviteUrl)}`)).status).toBe(404);

    const elsewhere = await expectStatus(invite(await newProject('Other'), freshEmail('elsewhere')), 201);
    for (const id of [answer.invitation.id, randomUUID(), elsewhere.invitation.id, 'not-a-uuid']) {
      const response = await api.request('DELETE', `/api/projects/${projectId}/invitations/${id}`, { token: owner.accessToken });
      expect(response.status, id).toBe(404);
    }
  });
});

describe('POST /api/auth/register with inviteToken', () => {
  const register = (json: Record<string, unknown>) =>
    api.request('POST', '/api/auth/register', { json: { password: 'correct horse battery', name: 'Newcomer', ...json } });

  it('registers and joins in one step when the email matches', async () => {
    const projectId = await newProject();
    const email = freshEmail('joiner');
    const token = await invitedToken(projectId, email, 'ADMIN');
    const response = await register({ email: email.toUpperCase(), inviteToken: token });
    expect(response.status).toBe(201);
    const userId = response.body.user.id;
    const joined = (await detail(projectId)).members.find((m: { userId: string }) => m.userId === userId);
    expect(joined).toMatchObject({ email, role: 'ADMIN' });
    expect((await detail(projectId)).invitations).toEqual([]);
  });

  it('creates nothing for an invitation to another email (403) or an unknown one (404)', async () => {
    const projectId = await newProject();
    const invited = freshEmail('invited');
    const token = await invitedToken(projectId, invited);
    const cases = [
      [token, 403, 'INVITATION_EMAIL_MISMATCH'],
      [randomBytes(32).toString('base64url'), 404, 'NOT_FOUND'],
    ] as const;
    for (const [inviteTokenValue, status, code] of cases) {
      const email = freshEmail('other');
      const response = await register({ email, inviteToken: inviteTokenValue });
      expect([response.status, response.body.code]).toEqual([status, code]);
      expect(await server.sql`select 1 from users where email = ${email}`).toHaveLength(0);
    }
    expect((await detail(projectId)).invitations.map((i: { email: string }) => i.email)).toEqual([invited]);
  });

  it('refuses a non-string inviteToken with 400', async () => {
    const response = await register({ email: freshEmail('bad'), inviteToken: 42 });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual(['inviteToken']);
  });
});

describe('GET /invite/:token', () => {
  /** Nothing on the page may come from elsewhere, and it runs no script. */
  function expectSelfContained(html: string, headers: Headers) {
    // But for its icon, inline (img-src data:): no request for /favicon.ico.
    const icon = /<link rel="icon" href="data:image\/svg\+xml,%3Csvg%20[^"]*">/;
    expect(html).toMatch(icon);
    expect(html.replace(icon, '')).not.toMatch(/<script|<link|<iframe|<img|@import|url\(/i);
    expect(html.replace(icon, '')).not.toMatch(/(src|href)=/i);
    const csp = headers.get('content-security-policy')!;
    expect(csp).toMatch(/^default-src 'none'/);
    expect(csp).not.toMatch(/script-src|https?:|\*/);
    expect(csp).toMatch(/; img-src data:;/);
    expect(headers.get('referrer-policy')).toBe('no-referrer');
    expect(headers.get('x-content-type-options')).toBe('nosniff');
  }

  it('shows the project, who invited, the role, the expiry and how to accept, every text escaped', async () => {
    const inviter = await api.register({ name: 'Eve <i>"the" & co</i>' });
    const project = await expectStatus(
      api.request('POST', '/api/projects', { token: inviter.accessToken, json: { name: '<script>alert(1)</script> Band' } }),
      201,
    );
    const answer = await expectStatus(
      api.request('POST', `/api/projects/${project.id}/invite`, { token: inviter.accessToken, json: { email: freshEmail('page'), role: 'ADMIN' } }),
      201,
    );
    const page = await call(server.url, 'GET', `/invite/${inviteToken(answer.inviteUrl)}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expectSelfContained(page.text, page.headers);
    expect(page.text).toContain('<h1>Join &#60;script&#62;alert(1)&#60;/script&#62; Band</h1>');
    expect(page.text).toContain('Eve &#60;i&#62;&#34;the&#34; &#38; co&#60;/i&#62; invites you as an ADMIN.');
    expect(page.text).toContain(`band invitation accept ${answer.inviteUrl}`);
    expect(page.text).toContain(`band auth register --invite ${answer.inviteUrl}`);
    expect(page.text).toContain(new Date(answer.invitation.expiresAt).toUTCString());
    expect(page.text).not.toContain(answer.invitation.email);
  });

  it('answers a plain 404 page for an unknown, revoked or expired link', async () => {
    const projectId = await newProject();
    const answer = await expectStatus(invite(projectId, freshEmail('gone')), 201);
    await expectStatus(api.request('DELETE', `/api/projects/${projectId}/invitations/${answer.invitation.id}`, { token: owner.accessToken }), 200);
    for (const token of [inviteToken(answer.inviteUrl), randomBytes(32).toString('base64url')]) {
      const page = await call(server.url, 'GET', `/invite/${token}`);
      expect(page.status).toBe(404);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('Invitation not found');
      expectSelfContained(page.text, page.headers);
    }
  });
});
