/**
 * Runs at most `concurrency` tasks at a time and lets up to `queueLength` more wait for a slot; a task past
 * that is refused at once with `refusal()`, so a flood costs the server almost nothing.
 */
export class Bounded {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queueLength: number,
    private readonly refusal: () => Error,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency) {
      this.running += 1;
    } else {
      if (this.waiting.length >= this.queueLength) throw this.refusal();
      // The finishing task hands its slot over: `running` stays as it is.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
