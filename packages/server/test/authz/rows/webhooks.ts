import { adminOnly, everyone, expectStatus, type Fixture, type MatrixRow } from '../fixture.js';

/** A public address needs no DNS and passes the address checks; its deliveries fail and retry, unseen. */
const newWebhookBody = { url: 'https://93.184.215.14/hook', events: ['*'] };
const sessionOnly = { readToken: 403, writeToken: 403, writeTokenOtherProject: 403, reviewToken: 403 };

/** One endpoint of the fixture's project for the rows that leave it in place (a project holds at most 20). */
const shared = new Map<string, Promise<string>>();
const sharedWebhook = (fx: Fixture): Promise<string> => {
  if (!shared.has(fx.project.id)) shared.set(fx.project.id, newProjectWebhook(fx));
  return shared.get(fx.project.id)!;
};

async function newProjectWebhook(fx: Fixture): Promise<string> {
  const created = await expectStatus(fx.api.request('POST', `/api/projects/${fx.project.id}/webhooks`, { token: fx.actors.projectAdmin.token, json: newWebhookBody }), 201);
  return created.id;
}

export const rows: MatrixRow[] = [
  {
    // Only the ADMIN and its write token create one: the project stays far from its 20 endpoints.
    endpoint: 'POST /api/projects/:id/webhooks',
    path: (fx) => `/api/projects/${fx.project.id}/webhooks`,
    body: () => newWebhookBody,
    expect: adminOnly(201),
  },
  { endpoint: 'GET /api/projects/:id/webhooks', path: (fx) => `/api/projects/${fx.project.id}/webhooks`, expect: adminOnly(200) },
  {
    // An account endpoint: the events of the caller's own projects; never with a token.
    endpoint: 'POST /api/webhooks',
    path: () => '/api/webhooks',
    body: () => newWebhookBody,
    expect: { ...everyone(201), anonymous: 401 },
    tokens: sessionOnly,
  },
  { endpoint: 'GET /api/webhooks', path: () => '/api/webhooks', expect: { ...everyone(200), anonymous: 401 }, tokens: sessionOnly },
  { endpoint: 'GET /api/webhooks/:id', path: async (fx) => `/api/webhooks/${await sharedWebhook(fx)}`, expect: adminOnly(200) },
  {
    endpoint: 'PUT /api/webhooks/:id',
    path: async (fx) => `/api/webhooks/${await sharedWebhook(fx)}`,
    body: () => ({ description: 'Checked' }),
    expect: adminOnly(200),
  },
  { endpoint: 'DELETE /api/webhooks/:id', path: async (fx) => `/api/webhooks/${await newProjectWebhook(fx)}`, expect: adminOnly(200) },
  { endpoint: 'POST /api/webhooks/:id/secret', path: async (fx) => `/api/webhooks/${await sharedWebhook(fx)}/secret`, expect: adminOnly(200) },
  { endpoint: 'POST /api/webhooks/:id/test', path: async (fx) => `/api/webhooks/${await sharedWebhook(fx)}/test`, expect: adminOnly(202) },
  { endpoint: 'GET /api/webhooks/:id/deliveries', path: async (fx) => `/api/webhooks/${await sharedWebhook(fx)}/deliveries`, expect: adminOnly(200) },
  {
    endpoint: 'POST /api/webhooks/:id/deliveries/:deliveryId/redeliver',
    path: async (fx) => {
      const id = await sharedWebhook(fx);
      const delivery = await expectStatus(fx.api.request('POST', `/api/webhooks/${id}/test`, { token: fx.actors.projectAdmin.token }), 202);
      return `/api/webhooks/${id}/deliveries/${delivery.id}/redeliver`;
    },
    expect: adminOnly(202),
  },
];
