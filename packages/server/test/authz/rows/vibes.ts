import { anyMember, type MatrixRow } from '../fixture.js';

export const rows: MatrixRow[] = [
  {
    endpoint: 'POST /api/projects/:projectId/vibes',
    path: (fx) => `/api/projects/${fx.project.id}/vibes`,
    body: () => ({ name: 'New vibe' }),
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
