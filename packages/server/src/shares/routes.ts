import type { App } from '@tinyhttp/app';
import { injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';

/** Share links, the public share endpoint and the /share/:token page (API.md §6). */
@injectable()
export class SharesRoutes implements Feature {
  register(_app: App): void {}
}
