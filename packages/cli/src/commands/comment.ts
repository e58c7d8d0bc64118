// Comments pinned to moments of a mix (§14): add, list (a file's, or a cut's or project's inbox), reply,
// resolve, reopen, edit, delete, and export as markers for a DAW.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { BandClient, Comment, CommentCounts, CommentList, FileRecord, MarkerFormat } from '@bandcollab/sdk';
import { type Command, Option } from 'commander';
import { localName } from '../bulk-download.js';
import { commandRunner, type Context } from '../context.js';
import { type CliError, usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { loadedLibraries } from '../libraries.js';
import { confirm } from '../prompt.js';
import { noteLeftOut, pageSize, type PagingFlags, takeItems, withPaging } from '../paging.js';
import { withExamples } from '../render.js';
import { commentId, type CutRef, memberIn, projectDetail, resolveCut, resolveFile } from '../resolve.js';
import { parseTime } from '../times.js';
import { commentChangedView, commentedView, commentThreads, deleteCommentQuestion, deletedCommentView, exportedMarkersView, leftOutView, repliedView } from '../views/comments.js';
import { clockTime } from '../times.js';

type Where = Omit<CutRef, 'cut'> & { cut?: string };

/** The extension of each export, as the server names it (its Content-Disposition): `<file name>.<ext>`. */
/** The default file's ending: a WAV of markers is `mix.markers.wav`, never `mix.wav`, the mix itself. */
const EXPORT_EXTENSIONS: Record<MarkerFormat, string> = { midi: 'mid', rpp: 'zip', wav: 'markers.wav', audacity: 'txt', csv: 'csv', json: 'json' };

/**
 * The server's refusal of a time past the file's end (a field error on atMs or endMs), said in the units the
 * user typed: `--at 5:00.000 is past the end of mix.wav (3:03.000)`. Undefined for any other failure.
 */
function pastTheEnd(error: unknown, file: FileRecord, times: Times): CliError | undefined {
  const { BandApiError } = loadedLibraries()?.sdk ?? {};
  const durationMs = file.audio?.durationMs;
  if (!BandApiError || !(error instanceof BandApiError) || durationMs === undefined) return undefined;
  const fields = error.errors.map((fieldError) => fieldError.field);
  const flag = fields.includes('atMs') ? '--at' : fields.includes('endMs') ? '--to' : null;
  if (flag === null) return undefined;
  const given = flag === '--at' ? times.at! : times.to!;
  return usageError(`${flag} ${clockTime(given)} is past the end of ${file.name} (${clockTime(durationMs)})`);
}

export function register(comment: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(
    comment,
    'band comment add mix --cut Final --project Demo "snare too loud" --at 1:23 --to 1:31',
    'band comment list mix --cut Final --project Demo --status open',
    'band comment export mix --cut Final --project Demo --format midi',
  );

  withExamples(
    withFileWhere(comment.command('add').description('comment on a moment of a file (--at), a range (--at … --to …), or the whole mix').argument('<file>', 'file id, or name with --cut'))
      .argument('<body>', 'the comment (up to 5000 characters; newlines and tabs are kept)')
      .option('--at <time>', 'where: 83, 83.5s, 1:23, 1:23.450 or 1:02:03; leave out for the whole mix', (value) => parseTime(value, '--at'))
      .option('--to <time>', 'where a range ends (after --at)', (value) => parseTime(value, '--to'))
      .option('--mention <member>', 'notify a member: email, name or user id (repeat for several)', collect, [])
      .action(
        run(async (ctx, ref: string, body: string, options: Where & Times & { mention: string[] }) => {
          if (options.to !== undefined && options.at === undefined) throw usageError('--to ends a range: give its start with --at');
          const client = await ctx.signedIn();
          const file = await resolveFile(client, ref, options);
          const mentions = await mentionIds(client, () => client.cuts.get(file.cutId).then((cut) => cut.projectId), options.mention);
          const created = await client.comments.create(file.id, { body, atMs: options.at, endMs: options.to, mentions }).catch((error: unknown) => {
            throw pastTheEnd(error, file, options) ?? error;
          });
          ctx.out.done(created, () => commentedView(created, file.name));
        }),
      ),
    'band comment add 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d "snare too loud" --at 1:23',
    'band comment add mix --cut Final --vibe Mixes --project Demo "vocals drift here" --at 2:10.5 --to 2:18 --mention ben@example.com',
    'band comment add mix --cut Final --project Demo "love the new bridge"   # about the whole mix',
  );

  withExamples(
    withPaging(
      comment
        .command('list')
      .description("a file's comments with their replies, by moment; without <file>, the inbox of a --cut or a --project")
      .argument('[file]', 'file id, or name with --cut; leave out for the inbox of --cut or --project')
      .option('--cut <cut>', 'cut id or name: its inbox, or where to find <file> by name')
      .option('--vibe <vibe>', 'vibe id or name (to find the cut by name)')
      .option('--project <project>', "project id or name: its inbox (without --cut), or where to find the cut by name")
      .addOption(new Option('--status <status>', 'which comments').choices(['open', 'resolved', 'all']).default('all'))
      .option('--all-versions', "a file's comments on every version of it (default: the version named)")
        .option('--mine', 'inbox: only the comments that mention you'),
      'all',
    ).action(
        run(async (ctx, ref: string | undefined, options: Where & PagingFlags & { status: 'open' | 'resolved' | 'all'; allVersions?: boolean; mine?: boolean }) => {
          const client = await ctx.signedIn();
          if (ref !== undefined) {
            if (options.mine) throw usageError('--mine is for an inbox: leave out <file> and name a --cut or a --project');
            const file = await resolveFile(client, ref, options);
            const { comments, counts } = await commentsOf(ctx, client.comments.list(file.id, { status: options.status, versions: options.allVersions ? 'series' : 'this', limit: pageSize(options, 'all', COMMENT_PAGE) }), options);
            ctx.out.record(comments, () => commentThreads(ctx.out, comments, counts));
            return;
          }
          if (options.allVersions) throw usageError('--all-versions is for one file: an inbox holds every version already');
          const inbox = { status: options.status, mentionsMe: Boolean(options.mine), limit: pageSize(options, 'all', COMMENT_PAGE) };
          let list: CommentList;
          let fileNames: Map<string, string>;
          if (options.cut !== undefined) {
            const cut = await resolveCut(client, { ...options, cut: options.cut });
            list = client.comments.listOfCut(cut.id, inbox);
            fileNames = new Map(cut.files.map((file) => [file.id, file.name]));
          } else if (options.project !== undefined) {
            const detail = await projectDetail(client, options.project);
            list = client.comments.listOfProject(detail.id, inbox);
            fileNames = new Map(detail.vibes.flatMap((vibe) => vibe.cuts.flatMap((cut) => cut.files.map((file) => [file.id, `${cut.name} / ${file.name}`] as const))));
          } else {
            throw usageError('name a file, or a --cut or a --project for its inbox');
          }
          const { comments, counts } = await commentsOf(ctx, list, options);
          ctx.out.record(comments, () => commentThreads(ctx.out, comments, counts, (id) => fileNames.get(id)));
        }),
      ),
    'band comment list mix --cut Final --vibe Mixes --project Demo',
    'band comment list 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d --status open --all-versions',
    'band comment list --project Demo --mine --status open   # your inbox',
    'band comment list --cut Final --project Demo --json',
  );

  withExamples(
    comment
      .command('reply')
      .description('reply to a comment (replies are one level deep)')
      .argument('<comment-id>', 'the comment: its id, or its first characters as band comment list shows them')
      .argument('<body>', 'the reply')
      .option('--mention <member>', 'notify a member: email, name or user id (repeat for several)', collect, [])
      .action(
        run(async (ctx, id: string, body: string, options: { mention: string[] }) => {
          const client = await ctx.signedIn();
          const parent = await client.comments.get(await commentId(client, id));
          const mentions = await mentionIds(client, async () => parent.projectId, options.mention);
          const reply = await client.comments.create(parent.fileId, { body, parentId: parent.id, mentions });
          ctx.out.done(reply, () => repliedView(reply, parent));
        }),
      ),
    'band comment reply 5b0e2f7c "fixed in v3"',
  );

  for (const [verb, description, change, word] of [
    ['resolve', 'mark a comment as dealt with (any member)', (client: BandClient, id: string) => client.comments.resolve(id), 'Resolved'],
    ['reopen', 'open a resolved comment again (any member)', (client: BandClient, id: string) => client.comments.reopen(id), 'Reopened'],
  ] as const) {
    withExamples(
      comment
        .command(verb)
        .description(description)
        .argument('<comment-id>', 'the comment (a top-level one): its id or its first characters')
        .action(
          run(async (ctx, id: string) => {
            const client = await ctx.signedIn();
            const changed = await change(client, await commentId(client, id));
            ctx.out.done(changed, () => commentChangedView(word, changed));
          }),
        ),
      `band comment ${verb} 5b0e2f7c-1d3a-4c6e-9f8b-2a4d6c8e0f1a`,
    );
  }

  withExamples(
    comment
      .command('edit')
      .description('change your comment: its text, its time or whom it mentions')
      .argument('<comment-id>', 'the comment: its id or its first characters')
      .argument('[body]', 'the new text')
      .option('--at <time>', 'the new time: 83, 83.5s, 1:23, 1:23.450 or 1:02:03', (value) => parseTime(value, '--at'))
      .option('--to <time>', 'the new end of the range', (value) => parseTime(value, '--to'))
      .option('--mention <member>', 'the members it mentions, replacing the earlier ones (repeat for several)', collect, [])
      .action(
        run(async (ctx, id: string, body: string | undefined, options: Times & { mention: string[] }) => {
          if (body === undefined && options.at === undefined && options.to === undefined && options.mention.length === 0) {
            throw usageError('say what changes: a new text, --at, --to or --mention');
          }
          const client = await ctx.signedIn();
          const found = await commentId(client, id);
          const mentions = options.mention.length === 0 ? undefined : await mentionIds(client, () => client.comments.get(found).then((c) => c.projectId), options.mention);
          const edited = await client.comments.update(found, { body, atMs: options.at, endMs: options.to, mentions });
          ctx.out.done(edited, () => commentChangedView('Edited', edited));
        }),
      ),
    'band comment edit 5b0e2f7c-1d3a-4c6e-9f8b-2a4d6c8e0f1a "snare too loud, and the hats"',
    'band comment edit 5b0e2f7c-1d3a-4c6e-9f8b-2a4d6c8e0f1a --at 1:24.2',
  );

  withExamples(
    comment
      .command('delete')
      .description('move a comment and its replies to the trash (its author or a project ADMIN); with the trash off, one with replies stays as "(deleted)" above them')
      .argument('<comment-id>', 'the comment: its id or its first characters')
      .action(
        run(async (ctx, id: string) => {
          const client = await ctx.signedIn();
          const found = await client.comments.get(await commentId(client, id));
          await confirm(ctx.io, deleteCommentQuestion(found), ctx.options.yes);
          const deleted = await client.comments.delete(found.id);
          ctx.out.done(deleted, () => deletedCommentView(found, deleted));
        }),
      ),
    'band comment delete 5b0e2f7c-1d3a-4c6e-9f8b-2a4d6c8e0f1a --yes',
  );

  withExamples(
    withFileWhere(comment.command('export').description('save the comments as markers a DAW or editor opens (timed comments only; csv and json also hold whole-mix comments and replies, and band says what others left out)').argument('<file>', 'file id, or name with --cut'))
      .addOption(
        new Option('--format <format>', 'midi (.mid, any DAW), rpp (REAPER project + mix, .zip), wav (the WAV with cue points), audacity (labels), csv, json')
          .choices(['midi', 'rpp', 'wav', 'audacity', 'csv', 'json'])
          .makeOptionMandatory(),
      )
      .option('--offset <time>', 'added to every time: where the mix starts in your session (2s, 1:00)', (value) => parseTime(value, '--offset'))
      .addOption(new Option('--status <status>', 'which comments').choices(['open', 'all']).default('all'))
      .option('--all-versions', 'the comments of every version (default: the version named)')
      .option('-o, --output <path>', 'where to write (a directory, a file, or - for stdout); default: "<file name>.<ext>" here')
      .option('-f, --force', 'overwrite a file that is already there')
      .action(
        run(async (ctx, ref: string, options: Where & { format: MarkerFormat; offset?: number; status: 'open' | 'all'; allVersions?: boolean; output?: string; force?: boolean }) => {
          const client = await ctx.signedIn();
          const file = await resolveFile(client, ref, options);
          const markers = { format: options.format, offsetMs: options.offset, status: options.status, versions: options.allVersions ? ('series' as const) : ('this' as const) };
          if (options.output === '-') {
            await client.comments.export(file.id, markers, { to: ctx.io.stdout });
            await sayLeftOut(ctx, client, file.id, markers);
            return;
          }
          const mix = localName(file);
          const filename = `${mix.slice(0, mix.length - path.extname(mix).length)}.${EXPORT_EXTENSIONS[options.format]}`;
          const target = await ctx.saveTarget(options.output, filename);
          if (!options.force && existsSync(ctx.localPath(target))) throw usageError(`${target} already exists; add --force to overwrite it, or -o to save elsewhere`);
          const saved = await client.comments.export(file.id, markers, { to: ctx.localPath(target) });
          ctx.out.done({ fileId: file.id, format: options.format, path: target, size: saved.size }, () => exportedMarkersView(file.name, options.format, target, saved.size));
          await sayLeftOut(ctx, client, file.id, markers);
        }),
      ),
    'band comment export mix --cut Final --project Demo --format midi   # mix.mid: import it into your DAW',
    'band comment export mix --cut Final --project Demo --format rpp --status open   # mix.zip: a REAPER project',
    'band comment export mix --cut Final --project Demo --format wav --offset 2s -o mix-cues.wav',
    'band comment export 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d --format csv -o - | column -s, -t',
  );
}

/** The formats that hold only timed markers: whole-mix comments and replies are in csv and json alone. */
const TIMED_ONLY: readonly MarkerFormat[] = ['midi', 'rpp', 'wav', 'audacity'];

/** Tells (on stderr) what an export of markers only left out, so nobody takes the DAW's markers for every note. */
async function sayLeftOut(ctx: Context, client: BandClient, fileId: string, markers: { format: MarkerFormat; status: 'open' | 'all'; versions: 'this' | 'series' }): Promise<void> {
  if (!TIMED_ONLY.includes(markers.format)) return;
  let wholeMix = 0;
  let replies = 0;
  for await (const thread of client.comments.list(fileId, { status: markers.status, versions: markers.versions })) {
    if (thread.deleted) continue;
    if (thread.atMs === null) wholeMix += 1;
    replies += (thread.replies ?? []).filter((reply) => !reply.deleted).length;
  }
  const note = leftOutView(wholeMix, replies);
  if (note) ctx.out.info(note);
}

interface Times {
  at?: number;
  to?: number;
}

/** The file flags of a command that names a file: by id, or by name within --cut (of --vibe, of --project). */
export function withFileWhere(command: Command): Command {
  return command
    .option('--cut <cut>', 'cut id or name (to find the file by name)')
    .option('--vibe <vibe>', 'vibe id or name (to find the cut by name)')
    .option('--project <project>', 'project id or name (to find the cut by name)');
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The user ids of the members named by --mention (the project is only looked up when there are some). */
async function mentionIds(client: BandClient, projectIdOf: () => Promise<string>, refs: readonly string[]): Promise<string[] | undefined> {
  if (refs.length === 0) return undefined;
  const detail = await client.projects.get(await projectIdOf());
  return refs.map((ref) => memberIn(detail, ref).userId);
}

/** The most threads the server answers in a page. */
const COMMENT_PAGE = 500;

/** The comments --limit/--all ask for (threads: replies come with theirs), and the counts the pages carry. */
async function commentsOf(ctx: Context, list: CommentList, flags: PagingFlags): Promise<{ comments: Comment[]; counts: CommentCounts }> {
  const { items, lastPage, leftOut } = await takeItems(list, (page) => page.comments, flags, 'all');
  if (leftOut) noteLeftOut(ctx.out, items.length, 'threads');
  return { comments: items, counts: lastPage?.counts ?? { open: 0, resolved: 0 } };
}

