import path from 'node:path';
import type { BandClient, CutWithFiles } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { analysedFile, checkCut, checkFailed } from '../analysis.js';
import { type Context, commandRunner } from '../context.js';
import { parseDuration } from '../durations.js';
import type { Factory } from '../factory.js';
import { confirm } from '../prompt.js';
import type { FileProgress } from '../render.js';
import { counted, withExamples } from '../render.js';
import { type CutRef, resolveCut, resolveVibe } from '../resolve.js';
import { cutCheckTable } from '../views/files.js';
import { createdView, deletedView, movedCutView, renamedView, savedArchiveView } from '../views/projects.js';
import { showShareLink } from '../views/shares.js';

type Where = Omit<CutRef, 'cut'>;

export function register(cut: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(cut, 'band cut create "Take 1" --vibe Verse --project Demo');

  withExamples(
    cut
      .command('create')
      .description('add a cut to a vibe (names are unique in a vibe, ignoring case)')
      .argument('<name>', 'the cut name')
      .requiredOption('--vibe <vibe>', 'vibe id or name')
      .option('--project <project>', 'project id or name (to find the vibe by name)')
      .action(
        run(async (ctx, name: string, options: Required<Pick<Where, 'vibe'>> & Where) => {
          const client = await ctx.signedIn();
          const vibe = await resolveVibe(client, options.vibe, options.project);
          const created = await client.cuts.create(vibe.id, { name });
          ctx.out.done(created, () => createdView('cut', created, vibe.name));
        }),
      ),
    'band cut create "Take 1" --vibe Verse --project Demo',
  );

  withExamples(
    withWhere(cut.command('rename').description('rename a cut').argument('<cut>', 'cut id or name').argument('<new-name>', 'the new name')).action(
      run(async (ctx, ref: string, newName: string, options: Where) => {
        const client = await ctx.signedIn();
        const found = await resolveCut(client, { ...options, cut: ref });
        const updated = await client.cuts.update(found.id, { name: newName });
        ctx.out.done(updated, () => renamedView('cut', found.name, updated.name));
      }),
    ),
    'band cut rename "Take 1" "Take 1 (keeper)" --vibe Verse --project Demo',
  );

  withExamples(
    withWhere(cut.command('move').description('move a cut to another vibe of the same project').argument('<cut>', 'cut id or name'))
      .requiredOption('--to <vibe>', 'the target vibe, id or name')
      .action(
        run(async (ctx, ref: string, options: Where & { to: string }) => {
          const client = await ctx.signedIn();
          const found = await resolveCut(client, { ...options, cut: ref });
          const target = await resolveVibe(client, options.to, found.projectId);
          const moved = await client.cuts.move(found.id, target.id);
          ctx.out.done(moved, () => movedCutView(found.name, target.name));
        }),
      ),
    'band cut move "Take 1" --vibe Verse --to Chorus --project Demo',
  );

  withExamples(
    withWhere(
      cut
        .command('check')
        .description("every file's format side by side (waiting for the server's analysis); exit 7 when stems do not line up")
        .argument('<cut>', 'cut id or name'),
    )
      .addHelpText(
        'after',
        '\nThe cut\'s audio files and the audio entries of its STEM ZIPs must share one sample rate, one bit depth and one\n' +
          'length (within 10 ms), and every audio file must be analysable; otherwise band says what is off and exits 7.\n' +
          'With --json: {cutId, consistent, problems, audio}.',
      )
      .action(
        run(async (ctx, ref: string, options: Where) => {
          const client = await ctx.signedIn();
          const found = await resolveCut(client, { ...options, cut: ref });
          const files = await Promise.all(found.files.map((file) => analysedFile(client, file)));
          const { audio, problems } = checkCut(files);
          ctx.out.record({ cutId: found.id, consistent: problems.length === 0, problems, audio }, () => cutCheckTable(ctx.out, audio));
          if (problems.length > 0) throw checkFailed(`cut ${found.name}: ${problems.join('; ')}`);
          ctx.out.info(`cut ${found.name}: everything lines up`);
        }),
      ),
    'band cut check "Take 1" --vibe Verse --project Demo',
    'band cut check 3f1e0c4a-6b2d-4f8e-a1c3-5d7e9f0a2b4c --json',
  );

  withExamples(
    withWhere(cut.command('delete').description("delete a cut with its files (holding others' files: a project ADMIN only)").argument('<cut>', 'cut id or name')).action(
      run(async (ctx, ref: string, options: Where) => {
        const client = await ctx.signedIn();
        const found = await resolveCut(client, { ...options, cut: ref });
        await confirm(ctx.io, `Delete cut ${found.name} with its ${counted(found.files.length, 'file')}?`, ctx.options.yes);
        const deleted = await client.cuts.delete(found.id);
        ctx.out.done(deleted, () => deletedView('cut', found.name, deleted));
      }),
    ),
    'band cut delete "Take 1" --vibe Verse --project Demo --yes',
  );

  withExamples(
    withWhere(cut.command('download').description("save every file of a cut as one ZIP (stored, named as the files)").argument('<cut>', 'cut id or name'))
      .option('-o, --output <path>', 'where to write (a directory, a file, or - for stdout); default: "<cut name>.zip" here')
      .action(
        run(async (ctx, ref: string, options: Where & { output?: string }) => {
          const client = await ctx.signedIn();
          const found = await resolveCut(client, { ...options, cut: ref });
          await downloadArchive(ctx, client, found, options.output);
        }),
      ),
    'band cut download "Take 3" --vibe Verse --project Demo',
    'band cut download "Take 3" --vibe Verse --project Demo -o take3.zip',
    'band cut download 3f1e0c4a-6b2d-4f8e-a1c3-5d7e9f0a2b4c -o - | bsdtar -tf -',
  );

  withExamples(
    withWhere(cut.command('share').description("make a public link to a cut's files: a page with players and one Download all").argument('<cut>', 'cut id or name'))
      .option('--expires <duration>', 'link lifetime: 90s, 30m, 12h, 7d, 52w (60 s to 365 d); default: no expiry', parseDuration)
      .option('--no-download', 'a stream-only link: the page plays the previews; the originals and the ZIP do not download')
      .action(
        run(async (ctx, ref: string, options: Where & { expires?: number; download: boolean }) => {
          const client = await ctx.signedIn();
          const found = await resolveCut(client, { ...options, cut: ref });
          const link = await client.cuts.share(found.id, { expiresIn: options.expires, download: options.download });
          showShareLink(ctx.out, link);
        }),
      ),
    'band cut share "Take 3" --vibe Verse --project Demo --expires 7d',
  );
}

/** Streams the cut's ZIP to a file (progress as it comes) or to stdout. */
async function downloadArchive(ctx: Context, client: BandClient, cut: CutWithFiles, output: string | undefined): Promise<void> {
  if (output === '-') {
    await client.cuts.archive(cut.id, { to: ctx.io.stdout });
    return;
  }
  const filename = `${cut.name.replace(/[/\\]/g, '_')}.zip`;
  const target = await ctx.saveTarget(output, filename);
  // The ZIP's size is known once the server answers: the bar starts with the first bytes.
  const progress = await ctx.out.transfers('downloading', 1, cut.files.reduce((sum, file) => sum + file.size, 0));
  let bar: FileProgress | undefined;
  try {
    const saved = await client.cuts.archive(cut.id, {
      to: ctx.localPath(target),
      onProgress: ({ loaded, total }) => {
        bar ??= progress.start(path.basename(target), total ?? loaded);
        bar.update(loaded);
      },
    });
    bar?.finish(true);
    ctx.out.record(cut, () => savedArchiveView(cut.name, target, saved.size));
  } catch (error) {
    bar?.finish(false);
    throw error;
  } finally {
    progress.stop();
  }
}

function withWhere(command: Command): Command {
  return command
    .option('--vibe <vibe>', 'vibe id or name (to find the cut by name)')
    .option('--project <project>', 'project id or name (to find the cut or vibe by name)');
}
