import { setTimeout as delay } from 'node:timers/promises';

/** Polls `check` every 50 ms until it answers something truthy, and answers that; throws naming `what` after `timeoutMs`. */
export async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await delay(50);
  }
}
