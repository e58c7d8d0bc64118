import { setMaxListeners } from 'node:events';
import { type DomainError, unavailable } from './errors.js';

/**
 * The server's shutdown as the work it may have to cut short sees it. Uploads register here while they
 * stream; when the grace period ends they are cut (each answers 503 and removes its partial file), and the
 * database is stopped only once every one of them has settled.
 */
export class Shutdown {
  private readonly controller = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor() {
    // Every upload streaming in listens for the cut, and removes its listener when it ends: more than ten at
    // once is ordinary load, not the leak Node's default limit warns of (the soak test's 200 clients had
    // stderr say "Possible EventTarget memory leak detected"; heap snapshots showed none kept).
    setMaxListeners(0, this.controller.signal);
  }

  /** Aborted when the grace period is over. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Keeps `work` among what the shutdown waits for before it stops the database. */
  track<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
    return work;
  }

  /** Ends the grace period: everything tracked stops and cleans up. */
  cut(): void {
    this.controller.abort();
  }

  /** Resolves once nothing tracked is in flight any more. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }
}

/** The answer to work cut by the shutdown: nothing was stored, and the client may try again shortly. */
export const shuttingDown = (): DomainError => unavailable('The server is shutting down: nothing was stored. Try again in a moment.');
