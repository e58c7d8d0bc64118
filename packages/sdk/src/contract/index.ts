// The request and record schemas of the bandcollab API, shared by the server (which validates requests and
// generates its OpenAPI document from them) and the SDK (whose types are derived from them). This entry loads
// zod; `@bandcollab/sdk` does not.
export * from './comments.js';
export * from './error-codes.js';
export * from './fields.js';
export * from './file-paths.js';
export * from './file-types.js';
export * from './notifications.js';
export * from './records.js';
export * from './requests.js';
export * from './route-types.js';
export * from './routes.js';
// The query types a client names (each query is declared beside its routes, routes/<feature>.ts).
export type { AdminJobsQuery, AdminStorageQuery } from './routes/admin.js';
export type { WebhookDeliveriesQuery } from './routes/webhooks.js';
