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
 * sends nothing at all is the idle timeout's). The refusal is 503, as a shutdown's cut: what arrived before
 * is kept, and clients resume from the offset.
 */
export class MinimumRate {
  private windowStartMs: number;
  private bytesInWindow = 0;

  constructor(private readonly clock: Clock) {
    this.windowStartMs = clock.now();
  }

  take(bytes: number): void {
    const elapsedMs = this.clock.now() - this.windowStartMs;
    if (elapsedMs >= RATE_WINDOW_SECONDS * 1000) {
      if (this.bytesInWindow < (MIN_PATCH_BYTES_PER_SECOND * elapsedMs) / 1000) {
        throw unavailable(
          `This request sent its bytes slower than ${MIN_PATCH_BYTES_PER_SECOND / 1024} KiB/s over ${RATE_WINDOW_SECONDS} s and was cut: ` +
            'the bytes received before are kept; resume from the offset',
          1,
        );
      }
      this.windowStartMs = this.clock.now();
      this.bytesInWindow = 0;
    }
    this.bytesInWindow += bytes;
  }
}
