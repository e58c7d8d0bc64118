// Times into a mix on the command line (--at, --to, --offset), as musicians write them: seconds (`83`,
// `83.5s`), minutes and seconds (`1:23`, `1:23.450`), or hours too (`1:02:03`). Shown back as `1:23.450`
// (clockTime, below).
import { usageError } from './exit-codes.js';

const SECONDS = /^(\d+)(?:\.(\d{1,3}))?s?$/;
const CLOCK = /^(?:(\d+):)?(\d+):(\d{2})(?:\.(\d{1,3}))?$/;

/** "1:23.450" → 83450 (milliseconds); `flag` names the option in the usage error. */
export function parseTime(value: string, flag: string): number {
  const text = value.trim();
  const seconds = SECONDS.exec(text);
  if (seconds) return Number(seconds[1]) * 1000 + fraction(seconds[2]);
  const clock = CLOCK.exec(text);
  if (clock) {
    const [, hours, minutes, secs, millis] = clock;
    // With hours, minutes are 0–59 too ("1:75:00" is a typo, not 2:15:00); seconds always are.
    if (Number(secs) < 60 && (hours === undefined || Number(minutes) < 60)) {
      return ((Number(hours ?? 0) * 60 + Number(minutes)) * 60 + Number(secs)) * 1000 + fraction(millis);
    }
  }
  throw usageError(`${flag}: "${value}" is not a time like 83, 83.5s, 1:23, 1:23.450 or 1:02:03`);
}

/** ".45" → 450 ms: the digits after the point, padded to milliseconds. */
function fraction(digits: string | undefined): number {
  return digits === undefined ? 0 : Number(digits.padEnd(3, '0'));
}

/** A time into a mix as musicians read it: `1:23.450`, `1:02:03.000`. */
export function clockTime(ms: number): string {
  const whole = Math.round(ms);
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor(whole / 60_000) % 60;
  const seconds = ((whole % 60_000) / 1000).toFixed(3).padStart(6, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}
