import type { CliError } from '../exit-codes.js';
import type { PullAction, PushAction } from './plan.js';

/** What a push or pull planned and what failed of it. */
export interface SessionReport {
  actions: readonly (PushAction | PullAction)[];
  failures: { path: string; error: CliError }[];
  /** Symbolic links met in the folder and not followed. */
  symlinks: string[];
  /** Local files read to hash them (the others kept the manifest's sha256). */
  hashed: number;
  /** Bytes uploaded or downloaded. */
  bytes: number;
}
