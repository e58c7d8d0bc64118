import type { BandClient, CutWithFiles, ProjectDetail, VibeWithCuts } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { uploadFiles } from '../bulk-upload.js';
import { type Context, commandRunner } from '../context.js';
import { parseDuration } from '../durations.js';
import { CliError, EXIT, notFoundError, usageError } from '../exit-codes.js';
import { expand } from '../globs.js';
import type { Io } from '../io.js';
import { withExamples } from '../render.js';
import { isId, pick } from '../resolve.js';
import { createdOnTheWayView, publishedView } from '../views.js';

interface PublishOptions {
  project: string;
  vibe: string;
  cut: string;
  create?: boolean;
  share?: boolean;
  /** Seconds. */
  expires?: number;
  /** False with --no-resume. */
  resume: boolean;
}

export function register(publish: Command, io: Io): void {
  const run = commandRunner(io);
  withExamples(
    publish
      .description('upload one file to project / vibe / cut, creating them with --create, and optionally share it')
      .argument('<file>', 'the file to upload')
      .requiredOption('--project <project>', 'project id or name')
      .requiredOption('--vibe <vibe>', 'vibe id or name')
      .requiredOption('--cut <cut>', 'cut id or name')
      .option('--create', 'create the project, vibe and cut when they do not exist')
      .option('--share', 'make a public link and print its URL')
      .option('--expires <duration>', 'with --share: link lifetime (90s, 30m, 12h, 7d, 52w); default: no expiry', parseDuration)
      .option('--no-resume', 'send the file from its first byte, even when an interrupted run left it unfinished')
      .addHelpText(
        'after',
        '\nOutput: with --share, the share URL (with --json, the share link record); without, the file record with --json.',
      )
      .action(
        run(async (ctx, filePattern: string, options: PublishOptions) => {
          if (options.expires !== undefined && !options.share) throw usageError('--expires needs --share');
          const files = await expand([filePattern], ctx.io.cwd);
          if (files.length !== 1) throw usageError(`publish takes one file; ${filePattern} matches ${files.length}`);
          const client = await ctx.signedIn();
          const cut = await findOrCreateCut(ctx, client, options);
          const report = await uploadFiles(ctx, cut.id, [], files, { jobs: 1, skipExisting: false, resume: options.resume });
          const failure = report.failures[0];
          if (failure) throw failure.error;
          const file = report.records[0]!;
          if (!options.share) {
            ctx.out.record(file, () => publishedView(file));
            return;
          }
          const link = await client.files.share(file.id, { expiresIn: options.expires });
          ctx.out.info(publishedView(file));
          ctx.out.record(link, () => link.shareUrl);
        }),
      ),
    'band publish mix.mp3 --project Demo --vibe Mixes --cut Final',
    'band publish build/master.wav --project "Summer EP" --vibe Masters --cut "$CI_COMMIT_SHORT_SHA" --create --share --expires 7d',
  );
}

async function findOrCreateCut(ctx: Context, client: BandClient, options: PublishOptions): Promise<CutWithFiles> {
  const project = await findOrCreateProject(ctx, client, options);
  const vibe = await findOrCreate(project.vibes, options.vibe, 'vibe', `in project "${project.name}"`, options.create, async () => {
    const created = await createdOrTaken(
      () => client.vibes.create(project.id, { name: options.vibe }),
      async () => pick((await client.projects.get(project.id)).vibes, options.vibe, 'vibe', `in project "${project.name}"`),
    );
    if ('cuts' in created) return created;
    ctx.out.info(createdOnTheWayView('vibe', created.name));
    return { ...created, cuts: [] } satisfies VibeWithCuts;
  });
  return findOrCreate(vibe.cuts, options.cut, 'cut', `in vibe "${vibe.name}"`, options.create, async () => {
    const created = await createdOrTaken(
      () => client.cuts.create(vibe.id, { name: options.cut }),
      async () => client.cuts.get(pick((await client.vibes.get(vibe.id)).cuts, options.cut, 'cut', `in vibe "${vibe.name}"`).id),
    );
    if ('files' in created) return created;
    ctx.out.info(createdOnTheWayView('cut', created.name));
    return { ...created, files: [] } satisfies CutWithFiles;
  });
}

/**
 * A vibe or cut created by a run in parallel (two CI jobs publishing to one new cut) between our look-up and
 * our create answers NAME_TAKEN: that one is the one we wanted, so it is read again instead of failing.
 */
async function createdOrTaken<Created, Existing>(create: () => Promise<Created>, existing: () => Promise<Existing>): Promise<Created | Existing> {
  try {
    return await create();
  } catch (error) {
    const { BandApiError } = await import('@bandcollab/sdk');
    if (error instanceof BandApiError && error.code === 'NAME_TAKEN') return existing();
    throw error;
  }
}

async function findOrCreateProject(ctx: Context, client: BandClient, options: PublishOptions): Promise<ProjectDetail> {
  if (isId(options.project)) return client.projects.get(options.project);
  const projects = await client.projects.list();
  const found = await findOrCreate(projects, options.project, 'project', 'among your projects', options.create, async () => {
    const created = await client.projects.create({ name: options.project });
    ctx.out.info(createdOnTheWayView('project', created.name));
    return created;
  });
  return client.projects.get(found.id);
}

/** The item named `ref`; when there is none, a new one if `create`, else "not found" with a hint. */
async function findOrCreate<T extends { id: string; name: string }>(
  items: readonly T[],
  ref: string,
  what: string,
  where: string,
  create: boolean | undefined,
  make: () => Promise<T>,
): Promise<T> {
  try {
    return pick(items, ref, what, where);
  } catch (error) {
    if (!(error instanceof CliError) || error.exitCode !== EXIT.notFound) throw error;
    if (!create || isId(ref)) throw notFoundError(`${error.message}${create ? '' : ' (add --create to create it)'}`);
    return make();
  }
}
