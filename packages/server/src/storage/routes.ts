import type { App } from '@tinyhttp/app';
import { injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';

/** Storage statistics, GET /api/files/storage (API.md §6). */
@injectable()
export class StorageRoutes implements Feature {
  register(_app: App): void {}
}
