import type { App } from '@tinyhttp/app';
import { injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';

/** Real-time project events over WebSocket (API.md §7). */
@injectable()
export class EventsRoutes implements Feature {
  register(_app: App): void {}
}
