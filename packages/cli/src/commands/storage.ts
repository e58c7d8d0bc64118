import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';
import { storageView } from '../views.js';

export function register(storage: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(
    storage
      .description('how much you store, by type (and the whole site, for site admins)')
      .action(
        run(async (ctx) => {
          const stats = await (await ctx.signedIn()).files.storage();
          ctx.out.record(stats, () => storageView(ctx.out, stats));
        }),
      ),
    'band storage',
    'band storage --json',
  );
}
