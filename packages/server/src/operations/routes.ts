import type { App } from '@tinyhttp/app';
import { inject, injectable } from 'tsyringe';
import type { Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { ApiError } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import { sendJson } from '../core/http.js';
import { SERVER_VERSION } from '../version.js';
import { openApiDocument } from './openapi.js';

@injectable()
export class OperationsRoutes implements Feature {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  register(app: App): void {
    app.get('/api/health', async (_req, res) => {
      try {
        await this.sql`select 1`;
      } catch {
        throw new ApiError(503, 'UNAVAILABLE', 'The database is unreachable', { headers: { 'Retry-After': '5' } });
      }
      sendJson(res, 200, { status: 'ok', db: 'ok', version: SERVER_VERSION });
    });

    app.get('/api/openapi.json', async (_req, res) => {
      sendJson(res, 200, openApiDocument);
    });
  }
}
