import { adminOnly, anyMember, type MatrixRow } from '../fixture.js';

export const rows: MatrixRow[] = [
  {
    endpoint: 'POST /api/projects/:projectId/vibes',
    path: (fx) => `/api/projects/${fx.project.id}/vibes`,
    body: (_fx, actor) => ({ name: `New vibe by ${actor.name}` }),
    expect: anyMember(201),
  },
  {
    endpoint: 'GET /api/vibes/:id',
    path: (fx) => `/api/vibes/${fx.project.vibeId}`,
    expect: anyMember(),
  },
  {
    endpoint: 'PUT /api/vibes/:id',
    path: (fx) => `/api/vibes/${fx.project.vibeId}`,
    body: () => ({ name: 'Renamed vibe' }),
    expect: anyMember(),
  },
  {
    endpoint: 'DELETE /api/vibes/:id',
    path: async (fx) => `/api/vibes/${(await fx.newVibe()).vibeId}`,
    expect: anyMember(),
  },
  {
    endpoint: "DELETE /api/vibes/:id (holding the caller's own file)",
    path: async (fx, actor) => {
      const { vibeId, cutId } = await fx.newVibe();
      await fx.ownFileIn(cutId, actor);
      return `/api/vibes/${vibeId}`;
    },
    expect: anyMember(),
  },
  {
    endpoint: "DELETE /api/vibes/:id (holding another's file)",
    path: async (fx, actor) => {
      const { vibeId, cutId } = await fx.newVibe();
      await fx.othersFileIn(cutId, actor);
      return `/api/vibes/${vibeId}`;
    },
    expect: adminOnly(),
  },
  {
    endpoint: 'PUT /api/vibes/reorder',
    path: () => '/api/vibes/reorder',
    body: async (fx) => {
      const project = await fx.newProject();
      const second = await fx.api.request('POST', `/api/projects/${project.id}/vibes`, {
        token: fx.actors.projectAdmin.token,
        json: { name: 'Second' },
      });
      return { vibeIds: [second.body.id, project.vibeId] };
    },
    expect: anyMember(),
  },
];
