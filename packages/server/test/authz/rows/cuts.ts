import { adminOnly, anyMember, type MatrixRow } from '../fixture.js';

export const rows: MatrixRow[] = [
  {
    endpoint: 'POST /api/vibes/:vibeId/cuts',
    path: (fx) => `/api/vibes/${fx.project.vibeId}/cuts`,
    body: (_fx, actor) => ({ name: `New cut by ${actor.name}` }),
    expect: anyMember(201),
  },
  {
    endpoint: 'GET /api/cuts/:id',
    path: (fx) => `/api/cuts/${fx.project.cutId}`,
    expect: anyMember(),
  },
  {
    endpoint: 'PUT /api/cuts/:id',
    path: (fx) => `/api/cuts/${fx.project.cutId}`,
    body: () => ({ name: 'Renamed cut' }),
    expect: anyMember(),
  },
  {
    endpoint: 'PUT /api/cuts/:id/move',
    path: async (fx) => `/api/cuts/${await fx.newCut()}/move`,
    body: (fx) => ({ targetVibeId: fx.otherVibeId }),
    expect: anyMember(),
  },
  {
    endpoint: 'DELETE /api/cuts/:id',
    path: async (fx) => `/api/cuts/${await fx.newCut()}`,
    expect: anyMember(),
  },
  {
    endpoint: "DELETE /api/cuts/:id (holding the caller's own file)",
    path: async (fx, actor) => {
      const cutId = await fx.newCut();
      await fx.ownFileIn(cutId, actor);
      return `/api/cuts/${cutId}`;
    },
    expect: anyMember(),
  },
  {
    endpoint: "DELETE /api/cuts/:id (holding another's file)",
    path: async (fx, actor) => {
      const cutId = await fx.newCut();
      await fx.othersFileIn(cutId, actor);
      return `/api/cuts/${cutId}`;
    },
    expect: adminOnly(),
  },
];
