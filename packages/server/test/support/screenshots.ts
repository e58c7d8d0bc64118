import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SCREENSHOTS = fileURLToPath(new URL('../../../../test-results/', import.meta.url));

/**
 * Where a browser test leaves a screenshot for a person to look at: `test-results/` at the repository's root
 * (ignored by git), kept after the run, unlike the run's temporary folder.
 */
export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return path.join(SCREENSHOTS, name);
}
