import { anyMember, type MatrixRow } from '../fixture.js';

export const rows: MatrixRow[] = [
  {
    endpoint: 'POST /api/vibes/:vibeId/cuts',
    path: (fx) => `/api/vibes/${fx.project.vibeId}/cuts`,
    body: () => ({ name: 'New cut' }),
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
];
