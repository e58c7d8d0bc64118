// The server's own endpoints: liveness, this document, metrics and the home page.
import { declareRoutes } from '../route-types.js';

export const OPERATIONS_ROUTES = declareRoutes({
  health: {
    method: 'GET',
    path: '/api/health',
    auth: 'anonymous',
    response: 'Health',
    status: 200,
    errors: ['UNAVAILABLE'],
    tag: 'operations',
    summary: 'Liveness and database reachability',
  },
  openApi: {
    method: 'GET',
    path: '/api/openapi.json',
    auth: 'anonymous',
    status: 200,
    tag: 'operations',
    summary: 'This document',
    openapi: {"responses":{"200":{"description":"OK","content":{"application/json":{"schema":{"type":"object"}}}}}},
  },
  reference: {
    method: 'GET',
    path: '/api/reference',
    auth: 'anonymous',
    status: 200,
    tag: 'operations',
    summary: 'This document as a reference (every endpoint, then every schema): an HTML page for a browser, else Markdown',
    description: 'A request whose Accept header starts with text/html (a browser) gets a self-contained HTML page rendered from the Markdown; any other (curl, Accept: text/markdown) the Markdown, as docs/API.md holds it. Vary: Accept.',
    openapi: {"responses":{"200":{"description":"OK","content":{"text/markdown":{"schema":{"type":"string"}},"text/html":{"schema":{"type":"string"}}}}}},
  },
  metrics: {
    method: 'GET',
    path: '/metrics',
    auth: 'anonymous',
    status: 200,
    errors: ['UNAUTHENTICATED'],
    errorNotes: {
      401: 'UNAUTHENTICATED: {METRICS_TOKEN} is set and the request does not send it as `Authorization: Bearer <METRICS_TOKEN>` (nor comes from loopback with {METRICS_LOOPBACK})',
      404: 'NOT_FOUND: metrics are off (neither {METRICS_TOKEN} nor {METRICS_LOOPBACK} set), or only METRICS_LOOPBACK is on and the request comes from another address',
    },
    tag: 'operations',
    summary: "This instance's metrics in the Prometheus text format",
    description:
      'Per instance (scrape each one): `http_server_request_duration_seconds` (histogram by `http_request_method`, `http_route` — the route template, never the path — and `http_response_status_code`), `http_server_active_requests`, `http_server_request_body_size_bytes_total` and `http_server_response_body_size_bytes_total` (by method and route), `bandcollab_connections_open`, `bandcollab_websockets_open`, uploads (`bandcollab_uploads_started_total`, `_completed_total`, `_failed_total` by `protocol` multipart|tus, `bandcollab_uploads_terminated_total`, `bandcollab_upload_received_bytes_total`, `bandcollab_upload_duration_seconds`), `bandcollab_store_operation_duration_seconds` and `bandcollab_store_operation_errors_total` (by `operation`), `bandcollab_jobs` (by `kind`, `state`) and `bandcollab_jobs_oldest_queued_age_seconds` (by `kind`), `bandcollab_webhook_deliveries_total` (by `outcome`), `bandcollab_emails_total` (by `outcome`), `bandcollab_login_failures_total`, `bandcollab_rate_limited_total` (429 answers by route), `bandcollab_analysis_duration_seconds` and `bandcollab_preview_duration_seconds` (by `outcome`), `bandcollab_stored_bytes` and `bandcollab_stored_files` (by `type`, the storage report\'s totals), `bandcollab_users_near_quota` (accounts at 90 % of {USER_QUOTA_MB}; absent without a quota), `bandcollab_disk_free_bytes` and `bandcollab_disk_size_bytes` (DATA_DIR\'s file system), and Node\'s process metrics (`process_*`, `nodejs_*`). Jobs, stored totals and accounts near their quota are read from the database at most every 30 s, never per scrape. Every label comes from a fixed set: the series stay bounded whatever the number of users, projects or files. The database pool has no figures: the postgres client exposes none.',
    openapi: {"responses":{"200":{"description":"OK","content":{"text/plain; version=0.0.4":{"schema":{"type":"string"}}}}}},
  },
  home: {
    method: 'GET',
    path: '/',
    auth: 'anonymous',
    produces: 'html',
    status: 200,
    tag: 'operations',
    summary: 'A small HTML page for people who open the server in a browser, linking the API reference',
  },
});
