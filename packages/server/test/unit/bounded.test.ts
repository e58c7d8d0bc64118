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

it('serves the reserved lane first and never refuses it for a full open queue', async () => {
  const limit = new Bounded(1, 1, 2, { keyFull: () => new KeyFull(), full: () => new Full() }, 1, 1);
  const order: string[] = [];
  const running = held();
  const first = limit.run('a', running.task);
  const open = limit.run('b', async () => void order.push('open'));
  await expect(limit.run('c', held().task)).rejects.toBeInstanceOf(Full);
  const reserved = limit.run('d', async () => void order.push('reserved'), 'reserved');
  await expect(limit.run('e', held().task, 'reserved')).rejects.toBeInstanceOf(Full);
  running.finish();
  await Promise.all([first, open, reserved]);
  expect(order).toEqual(['reserved', 'open']);
});

it('occupy holds a place of its key without a slot: refused as run would be', async () => {
  const limit = bounded();
  const first = held();
  const second = held();
  const holding = [limit.occupy('guest', first.task), limit.occupy('guest', second.task)];
  await expect(limit.occupy('guest', held().task)).rejects.toBeInstanceOf(KeyFull);
  // The slot is still free for anyone else.
  await limit.run('other', async () => undefined);
  first.finish();
  second.finish();
  await Promise.all(holding);
  expect(() => limit.refuseWhenFull('guest')).not.toThrow();
});

it('takes the lanes in turn while both wait: a busy reserved lane does not starve the open one', async () => {
  const limit = new Bounded(1, 4, 4, { keyFull: () => new KeyFull(), full: () => new Full() }, 1, 4);
  const order: string[] = [];
  const running = held();
  const first = limit.run('a', running.task);
  const runs = [
    ...[1, 2, 3].map((n) => limit.run('vouched', async () => void order.push(`reserved ${n}`), 'reserved')),
    ...[1, 2].map((n) => limit.run('open', async () => void order.push(`open ${n}`))),
  ];
  running.finish();
  await Promise.all([first, ...runs]);
  expect(order).toEqual(['reserved 1', 'open 1', 'reserved 2', 'open 2', 'reserved 3']);
});
