import type { AdminJobsQuery } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';
import { adminJobsView, retriedJobView } from '../views/admin.js';

interface JobsOptions {
  state?: string;
  kind?: string;
}

export function register(admin: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(admin, 'band admin jobs', 'band admin jobs retry 0b5f…');

  const jobs = admin
    .command('jobs')
    .description('the background job queue: jobs by kind and state, the oldest waiting, the last 100 failed with their errors (site admins)')
    .option('--state <state>', 'only this state: queued, running, done or failed')
    .option('--kind <kind>', 'only this kind (analysis, webhook_delivery, email, …)')
    .action(
      run(async (ctx, options: JobsOptions) => {
        // The server checks the names (400 VALIDATION_FAILED names the one it refuses).
        const overview = await (await ctx.signedIn()).admin.jobs(options as AdminJobsQuery);
        ctx.out.record(overview, () => adminJobsView(ctx.out, overview));
      }),
    );
  withExamples(jobs, 'band admin jobs', 'band admin jobs --state failed --kind webhook_delivery', 'band admin jobs --json');

  withExamples(
    jobs
      .command('retry')
      .description('run a failed job again, its attempts renewed (site admins)')
      .argument('<id>', "the job's id (band admin jobs lists the failed ones)")
      .action(
        run(async (ctx, id: string) => {
          const retried = await (await ctx.signedIn()).admin.retryJob(id);
          ctx.out.record(retried, () => retriedJobView(retried));
        }),
      ),
    'band admin jobs retry 0b5f2c1e-…',
  );
}
