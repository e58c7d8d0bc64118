import { expect, it } from 'vitest';
import { Bounded } from '../../src/core/bounded.js';

class KeyFull extends Error {}
class Full extends Error {}

/** A task that runs until the test finishes it. */
function held() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { task: () => done, finish };
}

const bounded = () => new Bounded(1, 3, 2, { keyFull: () => new KeyFull(), full: () => new Full() });

it('gives one key at most its share of the slots and the queue, and every other key still a place', async () => {
  const limit = bounded();
  const first = held();
  const second = held();
  const running = limit.run('flooder', first.task);
  const waiting = limit.run('flooder', second.task);
  await expect(limit.run('flooder', held().task)).rejects.toBeInstanceOf(KeyFull);
  expect(() => limit.refuseWhenFull('flooder')).toThrow(KeyFull);
  const other = held();
  const othersTurn = limit.run('bystander', other.task);
  expect(() => limit.refuseWhenFull('bystander')).not.toThrow();

  first.finish();
  await running;
  // The flooder's place is free again as soon as its task ended, though the queue still holds its other one.
  expect(() => limit.refuseWhenFull('flooder')).not.toThrow();
  second.finish();
  other.finish();
  await Promise.all([waiting, othersTurn]);
});

it('refuses any key once the slot and the whole queue are taken, and hands a freed slot to the first waiting', async () => {
  const limit = bounded();
  const tasks = ['a', 'b', 'c', 'd'].map((key) => ({ key, ...held() }));
  const runs = tasks.map(({ key, task }) => limit.run(key, task));
  await expect(limit.run('e', held().task)).rejects.toBeInstanceOf(Full);
  tasks[0]!.finish();
  await runs[0];
  // A freed slot goes to the first in the queue: 'b' runs, and there is room to wait again.
  const late = held();
  const lateRun = limit.run('e', late.task);
  for (const { finish } of tasks.slice(1)) finish();
  late.finish();
  await Promise.all([...runs, lateRun]);
  expect(() => limit.refuseWhenFull('a')).not.toThrow();
});
