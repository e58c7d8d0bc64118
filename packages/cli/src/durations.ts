// Durations on the command line (--expires): a whole number with an optional unit.
import { usageError } from './exit-codes.js';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** "7d" → 604800 (seconds); plain numbers are seconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+)\s*([smhdw]?)$/i.exec(value.trim());
  if (!match) throw usageError(`--expires: "${value}" is not a duration like 90s, 30m, 12h, 7d or 52w`);
  return Number(match[1]) * UNIT_SECONDS[(match[2] || 's').toLowerCase()]!;
}
