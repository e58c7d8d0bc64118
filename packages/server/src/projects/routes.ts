import type { App } from '@tinyhttp/app';
import { injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';

/** Projects, members and invitations (API.md §4). */
@injectable()
export class ProjectsRoutes implements Feature {
  register(_app: App): void {}
}
