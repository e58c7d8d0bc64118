import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import { usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';
import { adminStorageView, storageView } from '../views/storage.js';

interface StorageOptions {
  by?: 'user' | 'project';
  top?: number;
}

export function register(storage: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(
    storage
      .description('how much you store, by type (and the whole site, for site admins)')
      .option('--by <what>', 'site admins: every user\'s or every project\'s storage (user or project)', byWhat)
      .option('--top <n>', 'site admins, with --by: also the N largest files of the site (1-1000)', topCount)
      .action(
        run(async (ctx, options: StorageOptions) => {
          const client = await ctx.signedIn();
          if (options.by === undefined) {
            if (options.top !== undefined) throw usageError('--top needs --by user or --by project');
            const stats = await client.files.storage();
            ctx.out.record(stats, () => storageView(ctx.out, stats));
            return;
          }
          const report = await client.admin.storage({ by: options.by, ...(options.top === undefined ? {} : { top: options.top }) });
          ctx.out.record(report, () => adminStorageView(ctx.out, report));
        }),
      ),
    'band storage',
    'band storage --json',
    'band storage --by user',
    'band storage --by project --top 10 --json',
  );
}

function byWhat(value: string): 'user' | 'project' {
  if (value !== 'user' && value !== 'project') throw usageError(`--by must be user or project, not "${value}"`);
  return value;
}

function topCount(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 1000) throw usageError(`--top must be a whole number from 1 to 1000, not "${value}"`);
  return number;
}
