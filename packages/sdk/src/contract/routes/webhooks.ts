// Webhook endpoints of a project or an account, and their deliveries.
import { z } from 'zod';
import { declareRoutes } from '../route-types.js';

/** Said of both ways to add a webhook endpoint. */
const WEBHOOK_DELIVERIES =
  "Deliveries are POSTs (Standard Webhooks 1.0) with webhook-id (the delivery, the same on every attempt), webhook-timestamp and webhook-signature `v1,<base64 HMAC-SHA256 of id.timestamp.body>` over the exact bytes sent, keyed by the bytes of the secret after `whsec_`; the body is `{type, timestamp, data}`, data being the event `{id, projectId, actor, at, data}`. `events` takes event types, `prefix.*` (`comment.*`) and `*`. URLs must be https (http only with {WEBHOOKS_ALLOW_HTTP}) and resolve to public addresses: private, loopback, link-local and multicast ones are refused here and at every delivery, after DNS resolution, unless {WEBHOOKS_ALLOW_PRIVATE}; redirects are never followed. At most 20 endpoints per project and per account.";

/** `GET /api/webhooks/:id/deliveries`. */
const webhookDeliveriesQuery = z.object({
  status: z.enum(['pending', 'succeeded', 'failed']).optional(),
  cursor: z.string().regex(/^\d{1,19}$/, 'must be a nextCursor of an earlier page').optional().meta({ description: 'The nextCursor of the previous page' }),
  // <number>: what a client passes is a number (the query string's text is coerced).
  limit: z.coerce
    .number<number>({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(100, 'must be at most 100')
    .default(50)
    .meta({ description: 'Deliveries per page, 1–100 (default 50)' }),
});
/** What a client sends (the limit as a number, before the server's default). */
export type WebhookDeliveriesQuery = z.input<typeof webhookDeliveriesQuery>;

export const WEBHOOK_ROUTES = declareRoutes({
  createProjectWebhook: {
    method: 'POST',
    path: '/api/projects/:id/webhooks',
    auth: 'write',
    params: { id: 'Project' },
    request: 'CreateWebhookRequest',
    response: 'CreatedWebhook',
    status: 201,
    errors: ['FORBIDDEN', 'RATE_LIMITED'],
    errorNotes: { 400: 'VALIDATION_FAILED: also a URL that is not https, or that resolves to a refused address', 403: 'FORBIDDEN: the caller is not an ADMIN of the project', 429: 'RATE_LIMITED: the project already has 20 endpoints' },
    tag: 'webhooks',
    summary: "Project ADMIN: add a webhook endpoint for the project's events; its secret is in this answer only",
    description: WEBHOOK_DELIVERIES,
  },
  listProjectWebhooks: {
    method: 'GET',
    path: '/api/projects/:id/webhooks',
    auth: 'read',
    params: { id: 'Project' },
    response: 'Webhook[]',
    status: 200,
    errors: ['FORBIDDEN'],
    errorNotes: { 403: 'FORBIDDEN: the caller is not an ADMIN of the project' },
    tag: 'webhooks',
    summary: "Project ADMIN: the project's webhook endpoints, oldest first, without their secrets",
  },
  createWebhook: {
    method: 'POST',
    path: '/api/webhooks',
    auth: 'session',
    request: 'CreateWebhookRequest',
    response: 'CreatedWebhook',
    status: 201,
    errors: ['RATE_LIMITED'],
    errorNotes: { 400: 'VALIDATION_FAILED: also a URL that is not https, or that resolves to a refused address', 429: 'RATE_LIMITED: the account already has 20 endpoints' },
    tag: 'webhooks',
    summary: 'Add a webhook endpoint of your account (with a session only): the events of every project you belong to; its secret is in this answer only',
    description: WEBHOOK_DELIVERIES,
  },
  listWebhooks: {
    method: 'GET',
    path: '/api/webhooks',
    auth: 'session',
    response: 'Webhook[]',
    status: 200,
    tag: 'webhooks',
    summary: "Your account's webhook endpoints, oldest first, without their secrets (with a session only)",
  },
  getWebhook: {
    method: 'GET',
    path: '/api/webhooks/:id',
    auth: 'read',
    params: { id: 'Webhook' },
    response: 'Webhook',
    status: 200,
    errors: ['FORBIDDEN'],
    errorNotes: { 403: "FORBIDDEN: a project's endpoint and the caller is not an ADMIN of the project" },
    tag: 'webhooks',
    summary: 'One webhook endpoint (a project ADMIN, or the owner of an account endpoint), without its secret',
    description: "Another account's endpoint, or one of a project the caller is not a member of, is 404; so is an account endpoint reached with a personal access token.",
  },
  updateWebhook: {
    method: 'PUT',
    path: '/api/webhooks/:id',
    auth: 'write',
    params: { id: 'Webhook' },
    request: 'UpdateWebhookRequest',
    response: 'Webhook',
    status: 200,
    errors: ['FORBIDDEN'],
    errorNotes: { 400: 'VALIDATION_FAILED: also a URL that is not https, or that resolves to a refused address', 403: "FORBIDDEN: a project's endpoint and the caller is not an ADMIN of the project" },
    tag: 'webhooks',
    summary: 'Change an endpoint: url, events, enabled, description',
    description: 'enabled: true turns on an endpoint the server disabled (its disabledReason cleared); its pending deliveries then go on in order.',
  },
  deleteWebhook: {
    method: 'DELETE',
    path: '/api/webhooks/:id',
    auth: 'write',
    params: { id: 'Webhook' },
    response: 'Deleted',
    status: 200,
    errors: ['FORBIDDEN'],
    errorNotes: { 403: "FORBIDDEN: a project's endpoint and the caller is not an ADMIN of the project" },
    tag: 'webhooks',
    summary: 'Remove an endpoint with its delivery log; nothing more is sent to it',
  },
  rotateWebhookSecret: {
    method: 'POST',
    path: '/api/webhooks/:id/secret',
    auth: 'write',
    params: { id: 'Webhook' },
    response: 'CreatedWebhook',
    status: 200,
    errors: ['FORBIDDEN'],
    errorNotes: { 403: "FORBIDDEN: a project's endpoint and the caller is not an ADMIN of the project" },
    tag: 'webhooks',
    summary: 'Rotate the signing secret: the new one is in this answer only; the old one signs beside it for 24 hours',
    description: 'While the overlap lasts webhook-signature carries two signatures (`v1,<new> v1,<old>`), so a receiver can switch at its own pace. Rotating again during an overlap ends the older secret at once.',
  },
  testWebhook: {
    method: 'POST',
    path: '/api/webhooks/:id/test',
    auth: 'write',
    params: { id: 'Webhook' },
    response: 'WebhookDelivery',
    status: 202,
    errors: ['FORBIDDEN'],
    errorNotes: { 403: "FORBIDDEN: a project's endpoint and the caller is not an ADMIN of the project" },
    tag: 'webhooks',
    summary: 'Queue a `webhook.test` delivery, after the deliveries already pending, as any other',
  },
  listWebhookDeliveries: {
    method: 'GET',
    path: '/api/webhooks/:id/deliveries',
    auth: 'read',
    params: { id: 'Webhook' },
    query: webhookDeliveriesQuery,
    response: 'WebhookDeliveryPage',
    status: 200,
    errors: ['VALIDATION_FAILED', 'FORBIDDEN'],
    errorNotes: { 403: "FORBIDDEN: a project's endpoint and the caller is not an ADMIN of the project" },
    tag: 'webhooks',
    summary: "The endpoint's deliveries of the last 30 days, newest first, 50 a page, each with every attempt",
    description: 'Attempts: at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h (± 10 % jitter), 10 in about 3 days. A 2xx ends a delivery; 429 and 503 with Retry-After wait that long (at most 24 h); 410 disables the endpoint; other answers, a timeout ({WEBHOOK_TIMEOUT_SECONDS}) or a refused address fail the attempt. An endpoint whose deliveries have all failed for 5 days is disabled with its disabledReason. Deliveries to one endpoint go one at a time, in event order.',
  },
  redeliverWebhook: {
    method: 'POST',
    path: '/api/webhooks/:id/deliveries/:deliveryId/redeliver',
    auth: 'write',
    params: { id: 'Webhook', deliveryId: 'Delivery' },
    response: 'WebhookDelivery',
    status: 202,
    errors: ['FORBIDDEN'],
    errorNotes: { 403: "FORBIDDEN: a project's endpoint and the caller is not an ADMIN of the project" },
    tag: 'webhooks',
    summary: 'A new attempt of a delivery now, with the same webhook-id and a fresh schedule of retries',
  },
});
