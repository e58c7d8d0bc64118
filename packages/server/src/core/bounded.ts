/**
 * Runs at most `concurrency` tasks at a time and lets up to `queueLength` more wait for a slot; a task past
 * that is refused at once with `refusal()`, so a flood costs the server almost nothing. With a `dutyCycle`
 * below 1 a slot rests after each task, in proportion to how long it worked, before the next may use it:
 * a saturated slot then works only that fraction of the time. The caller's answer does not wait for the rest.
 */
export class Bounded {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queueLength: number,
    private readonly refusal: () => Error,
    private readonly dutyCycle = 1,
  ) {}

  /** Throws `refusal()` when a task started now would be refused: lets a caller skip work before `run`. */
  refuseWhenFull(): void {
    if (this.running >= this.concurrency && this.waiting.length >= this.queueLength) throw this.refusal();
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency) {
      this.running += 1;
    } else {
      this.refuseWhenFull();
      // A freed slot is handed over: `running` stays as it is.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    const started = performance.now();
    try {
      return await task();
    } finally {
      const restMs = (performance.now() - started) * (1 / this.dutyCycle - 1);
      if (restMs > 0) setTimeout(() => this.release(), restMs).unref();
      else this.release();
    }
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }
}
