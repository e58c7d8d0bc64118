import type { CliError } from '../exit-codes.js';
import type { ActionKind, PullAction, PushAction } from './plan.js';

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

/** What `--dry-run --json` prints of each action. */
export function actionSummary(action: PushAction | PullAction): { path: string; action: ActionKind; reason: string } {
  return { path: action.path, action: action.action, reason: action.reason };
}
