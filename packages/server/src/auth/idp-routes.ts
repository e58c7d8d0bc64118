import type { App } from '@tinyhttp/app';
import { injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';

/** Sign-in through an external OpenID Connect provider (API.md §8). */
@injectable()
export class IdpRoutes implements Feature {
  register(_app: App): void {}
}
