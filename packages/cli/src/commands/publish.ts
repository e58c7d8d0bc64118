import path from 'node:path';
import type { BandClient, CutWithFiles, FileRecord, ProjectDetail, VibeWithCuts } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { analysedFile, checkFailed, type MasteringLimits, masteringProblems } from '../analysis.js';
import { uploadFiles } from '../bulk-upload.js';
import { sha256OfFile } from '../file-hash.js';
import { type Context, commandRunner } from '../context.js';
import { parseDuration } from '../durations.js';
import { CliError, EXIT, notFoundError, usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { expand, type LocalFile } from '../globs.js';
import { withExamples } from '../render.js';
import { isId, pick } from '../resolve.js';
import { alreadyPublishedView, publishedView } from '../views/files.js';
import { createdOnTheWayView } from '../views/projects.js';

interface PublishOptions extends MasteringLimits {
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

export function register(publish: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(
    publish
      .description(
        'upload one file to project / vibe / cut, creating them with --create, and optionally share it; a file whose content is already on the cut is not uploaded again, and one named as a file of the cut becomes its next version',
      )
      .argument('<file>', 'the file to upload')
      .requiredOption('--project <project>', 'project id or name')
      .requiredOption('--vibe <vibe>', 'vibe id or name')
      .requiredOption('--cut <cut>', 'cut id or name')
      .option('--create', 'create the project, vibe and cut when they do not exist')
      .option('--share', 'print the URL of a public link: the one an earlier publish --share made, while it works, else a new one')
      .option('--expires <duration>', 'with --share: link lifetime (90s, 30m, 12h, 7d, 52w), from now (a link reused lasts at least that); default: no expiry', parseDuration)
      .option('--max-true-peak <dBTP>', 'wait for the analysis; refuse (exit 7) when the true peak is above this, e.g. -1.0', decibels)
      .option('--loudness <LUFS:LU>', 'wait for the analysis; refuse (exit 7) unless the integrated loudness is within target ± tolerance, e.g. -14:1', loudnessRange)
      .option('--no-resume', 'send the file from its first byte, even when an interrupted run left it unfinished')
      .addHelpText(
        'after',
        '\nOutput: with --share, the share URL (with --json, the share link record); without, the file record with --json.\n' +
          'With --max-true-peak or --loudness (audio files only) band waits for the server to measure the mix; outside the limits it\n' +
          'does not share, prints the measured figures and exits 7. The file stays uploaded either way.',
      )
      .action(
        run(async (ctx, filePattern: string, options: PublishOptions) => {
          if (options.expires !== undefined && !options.share) throw usageError('--expires needs --share');
          const files = await expand([filePattern], ctx.io.cwd);
          if (files.length !== 1) throw usageError(`publish takes one file; ${filePattern} matches ${files.length}`);
          const gated = options.maxTruePeak !== undefined || options.loudness !== undefined;
          const { fileTypeFor } = await import('@bandcollab/sdk');
          if (gated && fileTypeFor(files[0]!.path)?.type !== 'CUT') throw usageError('--max-true-peak and --loudness take an audio file');
          const client = await ctx.signedIn();
          const cut = await findOrCreateCut(ctx, client, options);
          const local = files[0]!;
          // A re-run (a CI job retried) must not put the same bytes on the cut twice: names would clash.
          const sha256 = await sha256OfFile(local.path);
          const present = cut.files.find((record) => record.sha256 === sha256);
          if (present) ctx.out.info(alreadyPublishedView(path.basename(local.path), cut));
          // The mix keeps its name from run to run: a changed mix becomes the next version of the one of that name.
          const series = present ? undefined : cut.files.find((record) => record.series.latest && record.name === path.basename(local.path));
          let file = present ?? (await uploadOne(ctx, cut, local, options.resume, series?.id));
          if (gated) {
            file = await analysedFile(client, file);
            const problems = masteringProblems(file, options);
            if (problems.length > 0) throw checkFailed(`${file.name} not ${options.share ? 'shared' : 'accepted'}: ${problems.join('; ')} (the file stays uploaded, id ${file.id})`);
          }
          if (!options.share) {
            ctx.out.done(file, () => publishedView(file));
            return;
          }
          // The link an earlier run made, when it still works: a job that publishes on every run hands out one link.
          const link = await client.files.share(file.id, { expiresIn: options.expires, reuse: true });
          if (!present) ctx.out.info(publishedView(file));
          ctx.out.record(link, () => link.shareUrl);
        }),
      ),
    'band publish mix.mp3 --project Demo --vibe Mixes --cut Final',
    'band publish build/master.wav --project "Summer EP" --vibe Masters --cut "$CI_COMMIT_SHORT_SHA" --create --share --expires 7d',
    'band publish master.wav --project Demo --vibe Masters --cut Final --share --max-true-peak -1.0 --loudness -14:1',
  );
}

async function uploadOne(ctx: Context, cut: CutWithFiles, file: LocalFile, resume: boolean, versionOf: string | undefined): Promise<FileRecord> {
  // publish has looked for the same content on the cut itself, and says so in its own words.
  const report = await uploadFiles(ctx, cut, [file], { jobs: 1, duplicate: true, resume, versionOf, ifChanged: versionOf !== undefined });
  const failure = report.failures[0];
  if (failure) throw failure.error;
  return report.records[0]!;
}

function decibels(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number)) throw usageError(`--max-true-peak takes a number of dBTP such as -1.0, not "${value}"`);
  return number;
}

/** "-14:1" → target -14 LUFS, tolerance 1 LU. */
function loudnessRange(value: string): NonNullable<MasteringLimits['loudness']> {
  const match = /^\s*(-?\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*$/.exec(value);
  if (!match) throw usageError(`--loudness takes target:tolerance in LUFS and LU such as -14:1, not "${value}"`);
  return { target: Number(match[1]), tolerance: Number(match[2]) };
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
