import type { App } from '@tinyhttp/app';
import { injectable } from 'tsyringe';
import type { Feature } from '../core/feature.js';

/** File upload, read, download, media paths and delete (API.md §6). */
@injectable()
export class FilesRoutes implements Feature {
  register(_app: App): void {}
}
