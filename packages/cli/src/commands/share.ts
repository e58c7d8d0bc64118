import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import { usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';
import { resolveCut, resolveFile } from '../resolve.js';
import { feedbackLinkStateView, revokedLinkView, shareTable } from '../views/shares.js';

interface Where {
  file?: string;
  cut?: string;
  vibe?: string;
  project?: string;
}

export function register(share: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(share, 'band share list --cut "Take 3" --vibe Verse --project Demo', 'band share revoke 5b0e2f7c-1d3a-4c6e-9f8b-2a4d6c8e0f1a');

  withExamples(
    share
      .command('list')
      .description('the live links of a file (--file) or of a cut (--cut alone): who made them, when they expire, how often they were used')
      .option('--file <file>', 'file id, or name with --cut')
      .option('--cut <cut>', 'cut id or name: its links, or where to find --file by name')
      .option('--vibe <vibe>', 'vibe id or name (to find the cut by name)')
      .option('--project <project>', 'project id or name (to find the cut by name)')
      .action(
        run(async (ctx, options: Where) => {
          const client = await ctx.signedIn();
          let links;
          if (options.file !== undefined) {
            const file = await resolveFile(client, options.file, options);
            links = await client.shares.list({ fileId: file.id });
          } else if (options.cut !== undefined) {
            const cut = await resolveCut(client, { ...options, cut: options.cut });
            links = await client.shares.list({ cutId: cut.id });
          } else {
            throw usageError('name a file with --file, or a cut with --cut');
          }
          ctx.out.record(links, () => shareTable(ctx.out, links));
        }),
      ),
    'band share list --file mix --cut Final --vibe Mixes --project Demo',
    'band share list --cut "Take 3" --vibe Verse --project Demo --json',
  );

  withExamples(
    share
      .command('revoke')
      .description("revoke one link by its id (from band share list): its creator, the file's uploader or a project ADMIN")
      .argument('<id>', 'the link id')
      .action(
        run(async (ctx, id: string) => {
          const client = await ctx.signedIn();
          const result = await client.shares.revoke(id);
          ctx.out.record(result, () => revokedLinkView(id));
        }),
      ),
    'band share revoke 5b0e2f7c-1d3a-4c6e-9f8b-2a4d6c8e0f1a',
  );

  withExamples(
    share
      .command('close-comments')
      .description('close a feedback link to new comments without revoking it (it still plays and shows its comments): its creator or a project ADMIN')
      .argument('<id>', 'the link id (from band share list)')
      .action(
        run(async (ctx, id: string) => {
          const client = await ctx.signedIn();
          const state = await client.shares.closeComments(id);
          ctx.out.record(state, () => feedbackLinkStateView(state));
        }),
      ),
    'band share close-comments 5b0e2f7c-1d3a-4c6e-9f8b-2a4d6c8e0f1a',
  );

  withExamples(
    share
      .command('reopen-comments')
      .description('reopen a feedback link to comments: its creator or a project ADMIN')
      .argument('<id>', 'the link id (from band share list)')
      .action(
        run(async (ctx, id: string) => {
          const client = await ctx.signedIn();
          const state = await client.shares.reopenComments(id);
          ctx.out.record(state, () => feedbackLinkStateView(state));
        }),
      ),
    'band share reopen-comments 5b0e2f7c-1d3a-4c6e-9f8b-2a4d6c8e0f1a',
  );
}
