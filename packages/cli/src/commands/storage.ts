import type { StorageBreakdown } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { type Context, run } from '../context.js';
import { formatBytes, withExamples } from '../render.js';

export function register(program: Command): void {
  withExamples(
    program
      .command('storage')
      .description('how much you store, by type (and the whole site, for site admins)')
      .action(
        run(async (ctx) => {
          const stats = await (await ctx.signedIn()).files.storage();
          ctx.out.record(stats, () => {
            const lines = [ctx.out.bold('Your uploads'), breakdownTable(ctx, stats.breakdown, stats.totalSize, stats.fileCount)];
            if (stats.site) {
              lines.push('', ctx.out.bold(`Whole site: ${stats.site.userCount} users, ${stats.site.projectCount} projects`));
              lines.push(breakdownTable(ctx, stats.site.breakdown, stats.site.totalSize, stats.site.fileCount));
            }
            return lines.join('\n');
          });
        }),
      ),
    'band storage',
    'band storage --json',
  );
}

function breakdownTable(ctx: Context, breakdown: StorageBreakdown, totalSize: number, fileCount: number): string {
  const rows = [
    { type: 'audio', ...breakdown.audio },
    { type: 'stems', ...breakdown.stems },
    { type: 'images', ...breakdown.images },
    { type: 'total', size: totalSize, count: fileCount },
  ];
  return ctx.out.table(rows, [
    { header: 'TYPE', value: (row) => row.type },
    { header: 'SIZE', value: (row) => formatBytes(row.size) },
    { header: 'FILES', value: (row) => String(row.count) },
  ]);
}
