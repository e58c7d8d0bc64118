import type { App } from '@tinyhttp/app';
import { injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';

/** Vibes (API.md §5). */
@injectable()
export class VibesRoutes implements Feature {
  register(_app: App): void {}
}
