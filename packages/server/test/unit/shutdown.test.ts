import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { Shutdown } from '../../src/core/shutdown.js';

const warnings: Error[] = [];
const collect = (warning: Error) => warnings.push(warning);

afterEach(() => {
  process.off('warning', collect);
  warnings.length = 0;
});

it('lets any number of uploads in flight listen for the cut without a "possible memory leak" warning', async () => {
  process.on('warning', collect);
  const shutdown = new Shutdown();
  const listeners = Array.from({ length: 50 }, () => () => undefined);
  for (const listener of listeners) shutdown.signal.addEventListener('abort', listener, { once: true });
  // Node emits the warning on a later turn.
  await nextTurn();
  expect(warnings.map((warning) => warning.name)).toEqual([]);
  for (const listener of listeners) shutdown.signal.removeEventListener('abort', listener);
});
