/** Why a task was not admitted: its key already holds its share, or the whole bound is full. */
export interface Refusals {
  keyFull: () => Error;
  full: () => Error;
}

/**
 * Runs at most `concurrency` tasks at a time and lets up to `queueLength` more wait for a slot, first come
 * first served. Each task has a key (who asked) and a key may hold at most `perKey` of those places, running
 * or waiting, so one asker flooding the bound fills only its own share and everyone else still gets a place.
 * A task past either bound is refused at once (`refusals.keyFull()` first, then `refusals.full()`), so a flood
 * costs the server almost nothing. With a `dutyCycle` below 1 a slot rests after each task, in proportion to
 * how long it worked, before the next may use it: a saturated slot then works only that fraction of the time.
 * The caller's answer does not wait for the rest.
 */
export class Bounded {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Tasks running or waiting, per key; a key with none is absent. */
  private readonly admitted = new Map<string, number>();

  constructor(
    private readonly concurrency: number,
    private readonly queueLength: number,
    private readonly perKey: number,
    private readonly refusals: Refusals,
    private readonly dutyCycle = 1,
  ) {}

  /** Throws when a task of `key` started now would be refused: lets a caller skip work before `run`. */
  refuseWhenFull(key: string): void {
    if ((this.admitted.get(key) ?? 0) >= this.perKey) throw this.refusals.keyFull();
    if (this.running >= this.concurrency && this.waiting.length >= this.queueLength) throw this.refusals.full();
  }

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    this.refuseWhenFull(key);
    this.admitted.set(key, (this.admitted.get(key) ?? 0) + 1);
    if (this.running < this.concurrency) {
      this.running += 1;
    } else {
      // A freed slot is handed over: `running` stays as it is.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    const started = performance.now();
    try {
      return await task();
    } finally {
      this.leave(key);
      const restMs = (performance.now() - started) * (1 / this.dutyCycle - 1);
      if (restMs > 0) setTimeout(() => this.release(), restMs).unref();
      else this.release();
    }
  }

  private leave(key: string): void {
    const count = (this.admitted.get(key) ?? 1) - 1;
    if (count === 0) this.admitted.delete(key);
    else this.admitted.set(key, count);
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }
}
