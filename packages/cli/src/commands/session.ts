// `band push <dir> --cut …` and `band pull <cut> <dir>` (§16): a DAW session folder mirrored to a cut and back,
// one way per run. The work is in session/; this parses, resolves the cut, and reports.
import type { Command } from 'commander';
import { type Context, commandRunner } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';
import { resolveCut } from '../resolve.js';
import type { SessionOptions } from '../session/folder.js';
import { actionSummary, type SessionReport } from '../session/report.js';
import { previewsPulledView, sessionPlanView, sessionSummaryView, symlinkSkippedView } from '../views/sessions.js';

interface Flags {
  force?: boolean;
  delete?: boolean;
  maxDelete?: number;
  dryRun?: boolean;
  jobs: number;
}

function withSessionFlags(command: Command, forceHelp: string, deleteHelp: string): Command {
  return command
    .option('--force', forceHelp)
    .option('--delete', deleteHelp)
    .option('--max-delete <n>', 'stop the run when it would delete more than this many files (default: 25 % of the files of the last run, at least 1)', wholeNumber('--max-delete', 0))
    .option('--dry-run', 'print the plan (with --json: {actions: [{path, action, reason}]}) and change nothing')
    .option('-j, --jobs <n>', 'how many files to transfer at the same time', wholeNumber('--jobs', 1, 64), 4);
}

export function registerPush(push: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(
    withSessionFlags(
      push
        .description(
          'upload what changed in a session folder since the last push or pull to a cut: changed files as new versions, new files with their path; a file changed on both sides is a conflict, skipped (exit 3). Files unchanged since the last run are not read; with nothing changed it says "Up to date: nothing to push"',
        )
        .argument('<dir>', 'the session folder')
        .requiredOption('--cut <cut>', 'cut id, or <project>/<vibe>/<cut> by id or name (a "/" in a name: "\\/")'),
      'upload files changed on both sides anyway, as the next version (the cut keeps every version), and renames in case only (vox.wav for Vox.wav)',
      "delete on the cut the files deleted here (their series: yours, or any as a project ADMIN; another member's is reported and kept, exit 3); without it each is named and left on the cut",
    ).action(
      run(async (ctx, dir: string, flags: Flags & { cut: string }) => {
        const client = await ctx.signedIn();
        const { parseCutPath } = await import('../session/paths.js');
        const cut = await resolveCut(client, parseCutPath(flags.cut));
        const { pushFolder } = await import('../session/push.js');
        report(ctx, await pushFolder(ctx, client, ctx.localPath(dir), cut.id, options(flags)), 'Pushed', Boolean(flags.dryRun));
      }),
    ),
    'band push ~/Sessions/Demo --cut "Demo/Verse/Take 3"',
    'band push . --cut 3f1e0c4a-6b2d-4f8e-a1c3-5d7e9f0a2b4c --delete --dry-run --json',
  );
}

export function registerPull(pull: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(
    withSessionFlags(
      pull
        .description(
          "download what changed on a cut since the last push or pull into a session folder (created when missing); a file changed on both sides gets the cut's version beside it (exit 3). With nothing changed it says \"Up to date: nothing to pull\"",
        )
        .argument('<cut>', 'cut id, or <project>/<vibe>/<cut> by id or name (a "/" in a name: "\\/")')
        .argument('<dir>', 'the session folder'),
      "replace files changed on both sides with the cut's version; the local file goes to .band/trash/",
      'move the files deleted on the cut to .band/trash/; without it each is named and left here',
    )
      .option('--previews', "fetch the listening previews (AAC, .m4a) of the cut's latest audio instead of the originals, for listening on the road: a plain folder, not a session folder (nothing to push back)")
      .action(
      run(async (ctx, cutRef: string, dir: string, flags: Flags & { previews?: boolean }) => {
        const client = await ctx.signedIn();
        const { parseCutPath } = await import('../session/paths.js');
        const cut = await resolveCut(client, parseCutPath(cutRef));
        if (flags.previews) {
          if (flags.force || flags.delete || flags.dryRun) throw usageError('--previews fetches a listening copy: --force, --delete and --dry-run are for session folders');
          const { pullPreviews } = await import('../session/previews.js');
          const result = await pullPreviews(client, cut, ctx.localPath(dir), flags.jobs);
          ctx.out.record(result, () => previewsPulledView(result));
          if (result.failed.length > 0) throw new CliError(`${result.failed.length} of ${result.fetched.length + result.failed.length + result.skipped.length} previews could not be fetched`, EXIT.partial);
          return;
        }
        const { pullFolder } = await import('../session/pull.js');
        report(ctx, await pullFolder(ctx, client, cut.id, ctx.localPath(dir), options(flags)), 'Pulled', Boolean(flags.dryRun));
      }),
    ),
    'band pull "Demo/Verse/Take 3" ~/Sessions/Demo',
    'band pull "Demo/Verse/Take 3" . --delete',
    'band pull "Demo/Verse/Take 3" ~/Music/Take3 --previews   # AAC previews to listen on the road',
  );
}

function options(flags: Flags): SessionOptions {
  return { force: Boolean(flags.force), delete: Boolean(flags.delete), maxDelete: flags.maxDelete, dryRun: Boolean(flags.dryRun), jobs: flags.jobs };
}

/** The plan or what was done, failures one line each; exit 3 when something needs the user (a conflict, a twin, a refused deletion, a failure). */
function report(ctx: Context, result: SessionReport, verb: 'Pushed' | 'Pulled', dryRun: boolean): void {
  for (const link of result.symlinks) ctx.out.info(symlinkSkippedView(link));
  for (const { path, error } of result.failures) ctx.out.error(`${path}: ${error.message}`, error.requestId);
  const actions = result.actions.map(actionSummary);
  if (ctx.out.json) ctx.out.record({ actions }, () => '');
  else if (dryRun) ctx.out.record(actions, () => sessionPlanView(ctx.out, result.actions, true));
  else ctx.out.info(sessionPlanView(ctx.out, result.actions, false));
  if (!dryRun) ctx.out.info(sessionSummaryView(verb, result));
  const attention = result.actions.filter((action) => action.attention).length + result.failures.length;
  if (attention > 0 && !dryRun) throw new CliError(`${attention} ${attention === 1 ? 'file needs' : 'files need'} your attention (see above)`, EXIT.partial);
  if (attention > 0) ctx.out.info(`${attention} ${attention === 1 ? 'file needs' : 'files need'} your attention`);
}

function wholeNumber(flag: string, min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < min || number > max) throw usageError(`${flag} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}, not "${value}"`);
    return number;
  };
}
