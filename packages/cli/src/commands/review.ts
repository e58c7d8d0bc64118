// Reviews of a file version (§14): approve it or request changes, withdraw, and `status`, the release gate of
// CI: exit 0 when the version has what is required, 7 (a failed check) saying what is missing when not.
import type { BandClient, ReviewPolicy, ReviewState } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import { CliError, EXIT, notFoundError, usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';
import { type CutRef, memberIn, resolveFile } from '../resolve.js';
import { fileLabel } from '../views/files.js';
import { notReadyView, readyView, type ReleaseShortfall, reviewedView, reviewRequestedView, reviewStatusView, withdrawnReviewView } from '../views/reviews.js';
import { withFileWhere } from './comment.js';

type Where = Omit<CutRef, 'cut'> & { cut?: string };

export function register(review: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(
    review,
    'band review approve mix --cut Final --project Demo',
    'band review status 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d --require 2 --no-open-comments   # CI: exit 7 when not ready',
  );

  for (const [verb, state, description] of [
    ['approve', 'approved', 'approve this version of a file (replaces your earlier review of it)'],
    ['request-changes', 'changes_requested', 'ask for changes to this version of a file (replaces your earlier review of it)'],
  ] as const satisfies readonly (readonly [string, ReviewState, string])[]) {
    withExamples(
      withFileWhere(review.command(verb).description(description).argument('<file>', 'file id, or name with --cut'))
        .option('--note <text>', 'a word for the band (up to 2000 characters)')
        .action(
          run(async (ctx, ref: string, options: Where & { note?: string }) => {
            const client = await ctx.signedIn();
            const file = await resolveFile(client, ref, options);
            const reviewed = await client.reviews.set(file.id, state, options.note);
            ctx.out.done(reviewed, () => reviewedView(reviewed, fileLabel(file)));
          }),
        ),
      `band review ${verb} mix --cut Final --vibe Mixes --project Demo`,
      `band review ${verb} 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d --note "${state === 'approved' ? 'ship it' : 'vocals 1 dB up'}"`,
    );
  }

  withExamples(
    withFileWhere(
      review
        .command('request')
        .description('ask members of the project to review this version of a file (they are emailed when the server sends email)')
        .argument('<file>', 'file id, or name with --cut'),
    )
      .requiredOption('--user <member>', 'a member to ask: email, name or user id (repeat for several)', (value: string, previous: string[] = []) => [...previous, value])
      .addHelpText(
        'after',
        '\nThe file record lists who was asked (reviewRequests) until each has reviewed that version; the project hears\n' +
          'review.requested. Each member asked gets an email unless the server has no email or they turned review\n' +
          'requests off (band notify set --review-requests off). With --json: {fileId, reviewRequests, emailed}.',
      )
      .action(
        run(async (ctx, ref: string, options: Where & { user: string[] }) => {
          const client = await ctx.signedIn();
          const file = await resolveFile(client, ref, options);
          const detail = await client.projects.get((await client.cuts.get(file.cutId)).projectId);
          const userIds = options.user.map((user) => memberIn(detail, user).userId);
          const requested = await client.reviews.request(file.id, userIds);
          ctx.out.done(requested, () => reviewRequestedView(requested, fileLabel(file), userIds));
        }),
      ),
    'band review request mix --cut Final --vibe Mixes --project Demo --user ben@example.com --user cy@example.com',
  );

  withExamples(
    withFileWhere(review.command('withdraw').description('take back your review of this version of a file').argument('<file>', 'file id, or name with --cut')).action(
      run(async (ctx, ref: string, options: Where) => {
        const client = await ctx.signedIn();
        const file = await resolveFile(client, ref, options);
        const withdrawn = await client.reviews.withdraw(file.id);
        ctx.out.done(withdrawn, () => withdrawnReviewView(fileLabel(file)));
      }),
    ),
    'band review withdraw mix --cut Final --vibe Mixes --project Demo',
  );

  withExamples(
    withFileWhere(
      review
        .command('status')
        .description("a version's reviews; exit 0 when it is ready for release, 7 saying what is missing when not (a CI gate)")
        .argument('<file>', 'file id, or name with --cut'),
    )
      .option('--require <n>', "approvals needed (default: the project's review policy)", approvalCount)
      .option('--no-open-comments', 'also require that no comment of the file (any version) is open (overrides the policy)')
      .option('--open-comments', 'let open comments pass (overrides the policy)')
      .addHelpText(
        'after',
        '\nReady means: at least --require approvals of this version, nobody\'s review of it asking for changes, and\n' +
          'with --no-open-comments no open comment on any version of the file. Without a flag the project\'s review policy\n' +
          '(`reviewPolicy`, set by a project ADMIN) decides it. Reviews do not carry over to the next version.\n' +
          'With --json: {fileId, ready, required, reviews, summary}.',
      )
      .action(
        run(async (ctx, ref: string, options: Where & { require?: number; openComments?: boolean }) => {
          const client = await ctx.signedIn();
          const file = await resolveFile(client, ref, options);
          const list = await client.reviews.list(file.id);
          const policy = options.require === undefined || options.openComments === undefined ? await projectPolicy(client, file.cutId) : null;
          const required = {
            approvals: options.require ?? policy!.approvals,
            noOpenComments: options.openComments === undefined ? policy!.noOpenComments : !options.openComments,
          };
          const shortfall = releaseShortfall(list.summary, list.reviews, required);
          const ready = Object.keys(shortfall).length === 0;
          ctx.out.record({ fileId: file.id, ready, required, ...list }, () => reviewStatusView(ctx.out, fileLabel(file), list));
          if (!ready) throw new CliError(notReadyView(fileLabel(file), shortfall), EXIT.checkFailed);
          ctx.out.info(readyView(fileLabel(file), list.summary.approved));
        }),
      ),
    'band review status mix --cut Final --vibe Mixes --project Demo',
    'band review status 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d --require 2 --no-open-comments && ./release.sh',
  );
}

/** The review policy of the project a cut is in (§19). */
async function projectPolicy(client: BandClient, cutId: string): Promise<ReviewPolicy> {
  const { projectId } = await client.cuts.get(cutId);
  const project = (await client.projects.list()).find((candidate) => candidate.id === projectId);
  if (!project) throw notFoundError(`the project of cut ${cutId} is not among yours`);
  return project.reviewPolicy;
}

/** What the version lacks: too few approvals, a standing request for changes, open comments when none may be. */
function releaseShortfall(
  summary: { approved: number; openComments: number },
  reviews: readonly { name: string; state: ReviewState }[],
  required: { approvals: number; noOpenComments: boolean },
): ReleaseShortfall {
  const shortfall: ReleaseShortfall = {};
  if (summary.approved < required.approvals) shortfall.approvals = { have: summary.approved, need: required.approvals };
  const requesters = reviews.filter((review) => review.state === 'changes_requested').map((review) => review.name);
  if (requesters.length > 0) shortfall.changesRequestedBy = requesters;
  if (required.noOpenComments && summary.openComments > 0) shortfall.openComments = summary.openComments;
  return shortfall;
}

function approvalCount(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || number > 1000) throw usageError(`--require must be a whole number of approvals (0 or more), not "${value}"`);
  return number;
}
