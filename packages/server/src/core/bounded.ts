/** Why a task was not admitted: its key already holds its share, or the whole bound is full. */
export interface Refusals {
  keyFull: () => Error;
  full: () => Error;
}

/** Which queue a task waits in: `reserved` for askers already vouched for, so a flood of the others cannot fill it. */
export type Lane = 'open' | 'reserved';

/**
 * Runs at most `concurrency` tasks at a time and lets up to `queueLength` more wait for a slot, first come
 * first served. Each task has a key (who asked) and a key may hold at most `perKey` of those places, running
 * or waiting, so one asker flooding the bound fills only its own share and everyone else still gets a place.
 * A task past either bound is refused at once (`refusals.keyFull()` first, then `refusals.full()`), so a flood
 * costs the server almost nothing. A second queue of `reservedQueueLength` places, the reserved lane, is for
 * tasks the caller vouches for: freed slots go to the two lanes in turn, the reserved one first, and the open
 * queue being full never refuses it.
 * With a `dutyCycle` below 1 a slot rests after each task, in proportion to how long it worked, before the
 * next may use it: a saturated slot then works only that fraction of the time. The caller's answer does not
 * wait for the rest.
 */
export class Bounded {
  private running = 0;
  private readonly waiting: Record<Lane, (() => void)[]> = { open: [], reserved: [] };
  /** Which lane the next freed slot goes to when both wait. */
  private reservedNext = true;
  /** Tasks running or waiting (and `occupy` holds), per key; a key with none is absent. */
  private readonly admitted = new Map<string, number>();

  constructor(
    private readonly concurrency: number,
    private readonly queueLength: number,
    private readonly perKey: number,
    private readonly refusals: Refusals,
    private readonly dutyCycle = 1,
    private readonly reservedQueueLength = 0,
  ) {}

  /** Throws when a task of `key` started now in `lane` would be refused: lets a caller skip work before `run`. */
  refuseWhenFull(key: string, lane: Lane = 'open'): void {
    if ((this.admitted.get(key) ?? 0) >= this.perKey) throw this.refusals.keyFull();
    const length = lane === 'open' ? this.queueLength : this.reservedQueueLength;
    if (this.running >= this.concurrency && this.waiting[lane].length >= length) throw this.refusals.full();
  }

  async run<T>(key: string, task: () => Promise<T>, lane: Lane = 'open'): Promise<T> {
    this.refuseWhenFull(key, lane);
    this.enter(key);
    if (this.running < this.concurrency) {
      this.running += 1;
    } else {
      // A freed slot is handed over: `running` stays as it is.
      await new Promise<void>((resolve) => this.waiting[lane].push(resolve));
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

  /**
   * Admits `task` as `run` would in the open lane (refused alike, holding a place of `key`'s share while it
   * runs) but outside the slots and the queue: for work that must look like a task of this bound to whoever
   * asked, without costing what one does.
   */
  async occupy<T>(key: string, task: () => Promise<T>): Promise<T> {
    this.refuseWhenFull(key);
    this.enter(key);
    try {
      return await task();
    } finally {
      this.leave(key);
    }
  }

  private enter(key: string): void {
    this.admitted.set(key, (this.admitted.get(key) ?? 0) + 1);
  }

  private leave(key: string): void {
    const count = (this.admitted.get(key) ?? 1) - 1;
    if (count === 0) this.admitted.delete(key);
    else this.admitted.set(key, count);
  }

  /**
   * Hands a freed slot to the lanes in turn when both wait, the reserved one first: a task in the reserved lane
   * waits for at most one of the open lane's, and a busy reserved lane (one vouched-for account logging in
   * without end) cannot starve the open one either.
   */
  private release(): void {
    const lanes: Lane[] = this.reservedNext ? ['reserved', 'open'] : ['open', 'reserved'];
    const lane = lanes.find((candidate) => this.waiting[candidate].length > 0);
    if (lane === undefined) {
      this.running -= 1;
      return;
    }
    this.reservedNext = lane === 'open';
    this.waiting[lane].shift()!();
  }
}
