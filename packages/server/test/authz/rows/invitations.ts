import { randomUUID } from 'node:crypto';
import { adminOnly, everyone, expectStatus, type Fixture, inviteToken, type MatrixRow } from '../fixture.js';

/** A fresh invitation to `email` (a new one by default) into the shared project, by its ADMIN. */
async function invitation(fx: Fixture, email = `invitee-${randomUUID()}@example.com`): Promise<{ id: string; token: string }> {
  const answer = await expectStatus(
    fx.api.request('POST', `/api/projects/${fx.project.id}/invite`, { token: fx.actors.projectAdmin.token, json: { email, role: 'MEMBER' } }),
    201,
  );
  return { id: answer.invitation.id, token: inviteToken(answer.inviteUrl) };
}

export const rows: MatrixRow[] = [
  {
    endpoint: 'DELETE /api/projects/:id/invitations/:invitationId',
    path: async (fx) => `/api/projects/${fx.project.id}/invitations/${(await invitation(fx)).id}`,
    expect: adminOnly(),
  },
  {
    endpoint: 'GET /api/invitations/:token',
    path: async (fx) => `/api/invitations/${(await invitation(fx)).token}`,
    expect: everyone(200),
  },
  {
    endpoint: 'GET /invite/:token',
    path: async (fx) => `/invite/${(await invitation(fx)).token}`,
    expect: everyone(200),
  },
  {
    // Whoever signs in with the invited email may accept, into a project they do not belong to yet. The
    // shared project's members are invited into a fresh project of a stranger to them.
    endpoint: 'POST /api/invitations/accept',
    path: () => '/api/invitations/accept',
    body: async (fx, actor) => {
      if (!actor.token) return { token: (await invitation(fx)).token };
      const me = await expectStatus(fx.api.request('GET', '/api/auth/me', { token: actor.token }), 200);
      const inviter = await fx.api.register({ name: 'Inviter' });
      const project = await expectStatus(fx.api.request('POST', '/api/projects', { token: inviter.accessToken, json: { name: 'Elsewhere' } }), 201);
      const answer = await expectStatus(
        fx.api.request('POST', `/api/projects/${project.id}/invite`, { token: inviter.accessToken, json: { email: me.email, role: 'MEMBER' } }),
        201,
      );
      return { token: inviteToken(answer.inviteUrl) };
    },
    expect: { ...everyone(200), anonymous: 401 },
    // Joining a project reaches beyond a token limited to others.
    tokens: { writeTokenOtherProject: 403 },
  },
];
