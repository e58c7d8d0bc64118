import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import type { Factory } from '../factory.js';
import { confirm } from '../prompt.js';
import { counted, withExamples } from '../render.js';
import { pick, projectDetail, projectId, resolveVibe } from '../resolve.js';
import { createdView, deletedView, renamedView, vibeOrderView } from '../views/projects.js';

export function register(vibe: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(vibe, 'band vibe create Verse --project Demo');

  withExamples(
    vibe
      .command('create')
      .description('add a vibe at the end of a project (names are unique in a project, ignoring case)')
      .argument('<name>', 'the vibe name')
      .requiredOption('--project <project>', 'project id or name')
      .option('--image <path>', 'an image (JPEG, PNG, GIF or WebP, at most 5 MiB)')
      .action(
        run(async (ctx, name: string, options: { project: string; image?: string }) => {
          const client = await ctx.signedIn();
          const created = await client.vibes.create(await projectId(client, options.project), { name, image: ctx.localPath(options.image) });
          ctx.out.done(created, () => createdView('vibe', created));
        }),
      ),
    'band vibe create Verse --project Demo',
    'band vibe create Chorus --project Demo --image chorus.png',
  );

  withExamples(
    vibe
      .command('rename')
      .description('rename a vibe')
      .argument('<vibe>', 'vibe id or name')
      .argument('<new-name>', 'the new name')
      .option('--project <project>', 'project id or name (to find the vibe by name)')
      .action(
        run(async (ctx, ref: string, newName: string, options: { project?: string }) => {
          const client = await ctx.signedIn();
          const found = await resolveVibe(client, ref, options.project);
          const updated = await client.vibes.update(found.id, { name: newName });
          ctx.out.done(updated, () => renamedView('vibe', found.name, updated.name));
        }),
      ),
    'band vibe rename Verse "Verse 1" --project Demo',
  );

  withExamples(
    vibe
      .command('delete')
      .description("delete a vibe with its cuts and their files (holding others' files: a project ADMIN only)")
      .argument('<vibe>', 'vibe id or name')
      .option('--project <project>', 'project id or name (to find the vibe by name)')
      .action(
        run(async (ctx, ref: string, options: { project?: string }) => {
          const client = await ctx.signedIn();
          const found = await resolveVibe(client, ref, options.project);
          await confirm(ctx.io, `Delete vibe ${found.name} with its ${counted(found.cuts.length, 'cut')} and their files?`, ctx.options.yes);
          const deleted = await client.vibes.delete(found.id);
          ctx.out.done(deleted, () => deletedView('vibe', found.name, deleted));
        }),
      ),
    'band vibe delete Verse --project Demo',
    'band vibe delete 5f1c7c1e-8a4b-4d2e-9b3a-0c6d7e8f9a10 --yes',
  );

  withExamples(
    vibe
      .command('reorder')
      .description('put vibes in a new order: the ones named come first, in that order; the rest keep theirs')
      .argument('<vibes...>', 'vibe ids or names')
      .requiredOption('--project <project>', 'project id or name')
      .action(
        run(async (ctx, refs: string[], options: { project: string }) => {
          const client = await ctx.signedIn();
          const detail = await projectDetail(client, options.project);
          const first = refs.map((ref) => pick(detail.vibes, ref, 'vibe', `in project "${detail.name}"`).id);
          const order = [...new Set(first)].concat(detail.vibes.map((v) => v.id).filter((id) => !first.includes(id)));
          const result = await client.vibes.reorder(order);
          ctx.out.done(result, () => vibeOrderView(result));
        }),
      ),
    'band vibe reorder Chorus Verse Bridge --project Demo',
    'band vibe reorder Outro --project Demo   # Outro first, the others after it as before',
  );
}
