import { everyone, type MatrixRow } from '../fixture.js';

export const rows: MatrixRow[] = [
  { endpoint: 'GET /api/health', path: () => '/api/health', expect: everyone(200) },
  { endpoint: 'GET /api/openapi.json', path: () => '/api/openapi.json', expect: everyone(200) },
  { endpoint: 'GET /api/reference', path: () => '/api/reference', expect: everyone(200) },
  { endpoint: 'GET /', path: () => '/', expect: everyone(200) },
];
