import type { BandClient, TrashItem } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import { notFoundError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { confirm } from '../prompt.js';
import { withExamples } from '../render.js';
import { projectId } from '../resolve.js';
import { purgeQuestion, purgingView, restoredView, trashTable } from '../views/trash.js';

export function register(trash: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(trash, 'band trash list --project Demo', 'band trash restore <id>');

  withExamples(
    trash
      .command('list')
      .description("what a project's trash holds (--project), or yours: your trashed projects and what you deleted; newest first")
      .option('--project <project>', 'the project (id or name)')
      .action(
        run(async (ctx, options: { project?: string }) => {
          const client = await ctx.signedIn();
          const items = await client.trash.list(options.project ? await projectId(client, options.project) : null);
          ctx.out.record(items, () => trashTable(ctx.out, items));
        }),
      ),
    'band trash list',
    'band trash list --project Demo --json',
  );

  withExamples(
    trash
      .command('restore')
      .description('put a trashed project, vibe, cut, file, comment, cover or vibe image back as it was (with its parent, if that is in the trash too; a restored cover or image sends the one there now to the trash)')
      .argument('<id>', 'its id, as band trash list shows it')
      .option('--project <project>', "look in this project's trash (id or name), not only yours")
      .action(
        run(async (ctx, id: string, options: { project?: string }) => {
          const client = await ctx.signedIn();
          const item = await findTrashed(client, id, options.project);
          const restored = await client.trash.restore(item.kind, item.id);
          ctx.out.done(restored, () => restoredView(restored));
        }),
      ),
    'band trash restore 5f1c7c1e-8a4b-4d2e-9b3a-0c6d7e8f9a10',
  );

  withExamples(
    trash
      .command('purge')
      .description('delete a trashed thing for good, bytes and all (who deleted it or a project ADMIN)')
      .argument('<id>', 'its id, as band trash list shows it')
      .option('--project <project>', "look in this project's trash (id or name), not only yours")
      .action(
        run(async (ctx, id: string, options: { project?: string }) => {
          const client = await ctx.signedIn();
          const item = await findTrashed(client, id, options.project);
          await confirm(ctx.io, purgeQuestion(item), ctx.options.yes);
          const purged = await client.trash.purge(item.kind, item.id);
          ctx.out.done(purged, () => purgingView(item));
        }),
      ),
    'band trash purge 5f1c7c1e-8a4b-4d2e-9b3a-0c6d7e8f9a10 --yes',
  );
}

/** The entry with this id in your trash, or in the project's. */
async function findTrashed(client: BandClient, id: string, project: string | undefined): Promise<TrashItem> {
  const lists = [await client.trash.list(null), ...(project ? [await client.trash.list(await projectId(client, project))] : [])];
  const item = lists.flat().find((candidate) => candidate.id === id);
  if (!item) throw notFoundError(`${id} is not in your trash${project ? ` nor in the project's` : ' (for something another member deleted, add --project)'}`);
  return item;
}
