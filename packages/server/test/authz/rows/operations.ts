import { everyone, type MatrixRow } from '../fixture.js';

export const rows: MatrixRow[] = [
  { endpoint: 'GET /api/health', path: () => '/api/health', expect: everyone(200) },
  { endpoint: 'GET /api/openapi.json', path: () => '/api/openapi.json', expect: everyone(200) },
  { endpoint: 'GET /api/reference', path: () => '/api/reference', expect: everyone(200) },
  { endpoint: 'GET /', path: () => '/', expect: everyone(200) },
  // Off on this server (no METRICS_TOKEN, no METRICS_LOOPBACK): no account opens it. metrics.test.ts checks who may scrape when on.
  { endpoint: 'GET /metrics', path: () => '/metrics', expect: everyone(404) },
];
