/** The time access tokens are signed and checked against; tests move it forward instead of sleeping. */
export interface Clock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
