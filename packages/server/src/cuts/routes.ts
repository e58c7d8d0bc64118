import type { App } from '@tinyhttp/app';
import { injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';

/** Cuts (API.md §5). */
@injectable()
export class CutsRoutes implements Feature {
  register(_app: App): void {}
}
