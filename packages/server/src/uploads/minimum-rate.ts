import type { Clock } from '../core/clock.js';
import { unavailable } from '../core/errors.js';

/**
 * A PATCH must bring at least this many bytes a second, measured over each window: a slower one is cut (503,
 * what it sent before kept), so a trickle cannot hold an upload (and a user's PATCH slots) for hours. A body
 * that stops altogether is the idle timeout's (IDLE_TIMEOUT_SECONDS).
 */
export const MIN_PATCH_BYTES_PER_SECOND = 1024;
export const RATE_WINDOW_SECONDS = 60;

/**
 * MIN_PATCH_BYTES_PER_SECOND over each RATE_WINDOW_SECONDS of a PATCH, checked as bytes arrive (a body that
 * sends nothing at all is the idle timeout's). The bytes that arrive are counted before the window is judged
 * and kept: the request is cut after them, whichever chunks the socket delivered them in.
 */
export class MinimumRate {
  private windowStartMs: number;
  private bytesInWindow = 0;

  constructor(private readonly clock: Clock) {
    this.windowStartMs = clock.now();
  }

  /** Counts `bytes` arriving now; false when the window they close brought fewer than the minimum rate. */
  take(bytes: number): boolean {
    this.bytesInWindow += bytes;
    const elapsedMs = this.clock.now() - this.windowStartMs;
    if (elapsedMs < RATE_WINDOW_SECONDS * 1000) return true;
    if (this.bytesInWindow < (MIN_PATCH_BYTES_PER_SECOND * elapsedMs) / 1000) return false;
    this.windowStartMs = this.clock.now();
    this.bytesInWindow = 0;
    return true;
  }
}

/** The refusal of a PATCH that was too slow: 503, as a shutdown's cut, so clients resume from the offset. */
export function tooSlow() {
  return unavailable(
    `This request sent its bytes slower than ${MIN_PATCH_BYTES_PER_SECOND / 1024} KiB/s over ${RATE_WINDOW_SECONDS} s and was cut: ` +
      'the bytes received before are kept; resume from the offset',
    1,
  );
}
