import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { BandClient, FileRecord, StemEntry } from '@bandcollab/sdk';
import { type Command, Option } from 'commander';
import { downloadFiles, localName } from '../bulk-download.js';
import { uploadFiles } from '../bulk-upload.js';
import { type Context, commandRunner } from '../context.js';
import { parseDuration } from '../durations.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { expand } from '../globs.js';
import { confirm } from '../prompt.js';
import { counted, withExamples } from '../render.js';
import { type CutRef, resolveCut, resolveFile } from '../resolve.js';
import { downloadSummaryView, fileTable, fileView, savedPreviewView, savedView, uploadSummaryView, versionsTable } from '../views/files.js';
import { deletedView } from '../views/projects.js';
import { showShareLink, unsharedView } from '../views/shares.js';

type Where = Omit<CutRef, 'cut'> & { cut?: string };

export function register(file: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(
    file,
    'band file upload "takes/*.wav" --cut "Take 1" --vibe Verse --project Demo',
    'band file list --cut "Take 1" --vibe Verse --project Demo',
    'band file download --cut "Take 1" --vibe Verse --project Demo --dir take1 --jobs 8',
  );

  withExamples(
    withWhere(file.command('upload').description('upload files (paths or globs) to a cut, several at a time'), true)
      .argument('<paths...>', 'files or glob patterns ("takes/**/*.wav")')
      .option('-j, --jobs <n>', 'how many files to upload at the same time', positiveInteger, 4)
      .option('--duplicate', 'upload files whose content (sha256) is already on the cut anyway (by default they are skipped)')
      // Skipping is the default now; scripts written for the earlier band still pass the flag.
      .addOption(new Option('--skip-existing').hideHelp())
      .option('--name <name>', 'display name (one file only; default: the file name)')
      .option('--version-of <file>', 'one file only: upload it as the next version of this file (id, or name on the --cut)')
      .option('--if-changed', 'with --version-of: send nothing when the latest version has the same content ("unchanged", exit 0)')
      .option('--no-resume', 'send every file from its first byte, even one an interrupted run left unfinished')
      .action(
        run(async (ctx, patterns: string[], options: Where & { cut: string; jobs: number; duplicate?: boolean; name?: string; resume: boolean; versionOf?: string; ifChanged?: boolean }) => {
          const files = await expand(patterns, ctx.io.cwd);
          if (options.name !== undefined && files.length > 1) throw usageError('--name needs exactly one file');
          if (options.versionOf !== undefined && files.length > 1) throw usageError('--version-of needs exactly one file');
          if (options.ifChanged && options.versionOf === undefined) throw usageError('--if-changed compares with the latest version: give --version-of');
          const client = await ctx.signedIn();
          const cut = await resolveCut(client, options);
          const versionOf = options.versionOf === undefined ? undefined : (await resolveFile(client, options.versionOf, options)).id;
          const report = await uploadFiles(ctx, cut, files, {
            jobs: options.jobs,
            // A new version is compared with its series (--if-changed), not with every file of the cut.
            duplicate: Boolean(options.duplicate) || versionOf !== undefined,
            name: options.name,
            resume: options.resume,
            versionOf,
            ifChanged: Boolean(options.ifChanged),
          });
          const failures = report.failures.map(({ file, error }) => ({ label: path.relative(ctx.io.cwd, file.path) || file.path, error }));
          reportTransfers(ctx, files.length, report.records, failures, uploadSummaryView(files.length, report));
        }),
      ),
    'band file upload take1.wav --cut "Take 1" --vibe Verse --project Demo',
    'band file upload "takes/*.wav" stems.zip --cut 3f1e0c4a-6b2d-4f8e-a1c3-5d7e9f0a2b4c --jobs 8',
    'band file upload "takes/*.wav" --cut Final --project Demo   # re-run: only what is missing is sent',
    'band file upload take1.wav --cut "Take 1" --vibe Verse --project Demo --duplicate   # the same content twice, on purpose',
    'band file upload stems.zip --cut Final --vibe Mixes --project Demo   # interrupted? run it again: it resumes',
    'band file upload mix.wav --cut Final --vibe Mixes --project Demo --version-of mix.wav --if-changed   # the next version, or "unchanged"',
  );


  withExamples(
    withWhere(file.command('list').description("a cut's files, by name"), true).action(
      run(async (ctx, options: Where & { cut: string }) => {
        const cut = await resolveCut(await ctx.signedIn(), options);
        // By name, as people look for a file ("take 2" before "take 10"); the same name keeps the upload order.
        const files = [...cut.files].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true, sensitivity: 'base' }));
        ctx.out.record(files, () => fileTable(ctx.out, files));
      }),
    ),
    'band file list --cut "Take 1" --vibe Verse --project Demo',
    'band file list --cut 3f1e0c4a-6b2d-4f8e-a1c3-5d7e9f0a2b4c --json',
  );

  withExamples(
    withWhere(file.command('info').description("a file's details").argument('<file>', 'file id, or name with --cut')).action(
      run(async (ctx, ref: string, options: Where) => {
        const found = await resolveFile(await ctx.signedIn(), ref, options);
        ctx.out.record(found, () => fileView(ctx.out, found));
      }),
    ),
    'band file info 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d',
    'band file info mix --cut Final --vibe Mixes --project Demo',
  );

  withExamples(
    withWhere(file.command('versions').description("a file's versions side by side, oldest first").argument('<file>', 'file id (any version), or name with --cut')).action(
      run(async (ctx, ref: string, options: Where) => {
        const client = await ctx.signedIn();
        const { versions } = await client.files.versions((await resolveFile(client, ref, options)).id);
        ctx.out.record(versions, () => versionsTable(ctx.out, versions));
      }),
    ),
    'band file versions mix.wav --cut Final --vibe Mixes --project Demo',
    'band file versions 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d --json',
  );

  withExamples(
    withWhere(
      file
        .command('download')
        .description("save a file's bytes; without <file>, every file of the --cut into a folder, several at a time")
        .argument('[file]', 'file id, or name with --cut; leave out to download the whole cut'),
    )
      .option('-o, --output <path>', 'one file: where to write (a directory, a file, or - for stdout); default: the file name here')
      .option('--dir <dir>', 'whole cut: the folder to save into (created if missing); default: here')
      .option('-j, --jobs <n>', 'whole cut: how many files to download at the same time', positiveInteger, 4)
      .option('--skip-existing', 'whole cut: skip files whose local copy already has the same sha256')
      .option('-f, --force', 'overwrite files that are already there (without it, band refuses)')
      .action(
        run(async (ctx, ref: string | undefined, options: Where & { output?: string; dir?: string; jobs: number; skipExisting?: boolean; force?: boolean }) => {
          const client = await ctx.signedIn();
          if (ref !== undefined) {
            if (options.dir !== undefined || options.skipExisting) throw usageError('--dir and --skip-existing are for a whole cut: leave out <file>');
            await download(ctx, client, await resolveFile(client, ref, options), options.output, Boolean(options.force));
            return;
          }
          if (!options.cut) throw usageError('name a file, or a whole cut with --cut');
          if (options.output !== undefined) throw usageError('-o is for one file; a whole cut goes into --dir');
          const cut = await resolveCut(client, { ...options, cut: options.cut });
          const dir = ctx.localPath(options.dir ?? '.');
          const report = await downloadFiles(ctx, cut.files, dir, { jobs: options.jobs, skipExisting: Boolean(options.skipExisting), force: Boolean(options.force) });
          const failures = report.failures.map(({ file, error }) => ({ label: file.name, error }));
          reportTransfers(ctx, cut.files.length, report.records, failures, downloadSummaryView(cut.files.length, report));
        }),
      ),
    'band file download mix --cut Final --vibe Mixes --project Demo',
    'band file download 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d -o ~/Music/',
    'band file download mix --cut Final --vibe Mixes --project Demo --force   # replace the mix.wav here',
    'band file download 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d -o - | ffplay -',
    'band file download --cut "Take 3" --vibe Verse --project Demo --dir take3 --jobs 8',
    'band file download --cut "Take 3" --vibe Verse --project Demo --dir take3 --skip-existing   # re-run: only what is missing',
  );

  withExamples(
    withWhere(file.command('preview').description("save a CUT's listening preview (AAC in MP4, 256 kbps) made by the server").argument('<file>', 'file id, or name with --cut'))
      .option('-o, --output <path>', 'where to write (a directory, a file, or - for stdout); default: the file name with .m4a here')
      .option('-f, --force', 'overwrite a file that is already there')
      .option('--entry <path|index>', "a STEM ZIP's audio entry, by its path in the ZIP or its index (0 first): its preview (the server's PREVIEW_STEMS=true)")
      .action(
        run(async (ctx, ref: string, options: Where & { output?: string; force?: boolean; entry?: string }) => {
          const client = await ctx.signedIn();
          const zip = await resolveFile(client, ref, options);
          const entry = options.entry === undefined ? null : await findEntry(client, zip, options.entry);
          // An entry is saved as a file's preview is: under its own name, with its own preview's facts.
          const found: FileRecord = entry === null ? zip : { ...zip, name: path.posix.basename(entry.path), preview: entry.preview };
          // Pending and failed previews are told plainly: the server answers 409 or 404 for them.
          if (found.preview.status !== 'done') throw new CliError(`${found.name} has no preview yet (${found.preview.status}); try again once it is made`, found.preview.status === 'pending' ? EXIT.error : EXIT.notFound);
          const save = (to: string | Writable) =>
            entry === null ? client.files.downloadPreview(found.id, { to }) : client.files.downloadEntryPreview(found.id, entry.index, { to });
          if (options.output === '-') {
            await save(ctx.io.stdout);
            return;
          }
          const target = await ctx.saveTarget(options.output, `${(entry === null ? localName(found) : found.name).replace(/\.[^.]+$/, '')}.m4a`);
          if (!options.force && existsSync(ctx.localPath(target))) throw usageError(`${target} already exists; add --force to overwrite it, or -o to save elsewhere`);
          await save(ctx.localPath(target));
          ctx.out.done(found, () => savedPreviewView(found, target));
        }),
      ),
    'band file preview mix.wav --cut Final --vibe Mixes --project Demo',
    'band file preview 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d -o - | ffplay -',
    'band file preview stems.zip --cut Final --vibe Mixes --project Demo --entry drums/kick.wav',
  );

  withExamples(
    withWhere(file.command('share').description('make a public link to a file').argument('<file>', 'file id, or name with --cut'))
      .option('--expires <duration>', 'link lifetime: 90s, 30m, 12h, 7d, 52w (60 s to 365 d); default: no expiry', parseDuration)
      .option('--feedback', 'a feedback link: whoever holds it can comment on the mix without an account')
      .addOption(new Option('--follow <which>', 'this: the link serves this version; latest: the newest version of the series at each access').choices(['this', 'latest']).default('this'))
      .option('--no-download', 'a stream-only link: the page plays the preview; the original does not download')
      .action(
        run(async (ctx, ref: string, options: Where & { expires?: number; feedback?: boolean; follow: 'this' | 'latest'; download: boolean }) => {
          const client = await ctx.signedIn();
          const found = await resolveFile(client, ref, options);
          const link = await client.files.share(found.id, { expiresIn: options.expires, allowComments: options.feedback === true, follow: options.follow, download: options.download });
          showShareLink(ctx.out, link);
        }),
      ),
    'band file share 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d --expires 7d',
    'band file share mix --cut Final --vibe Mixes --project Demo',
    'band file share mix --cut Final --project Demo --feedback --follow latest --expires 30d',
  );

  withExamples(
    withWhere(file.command('unshare').description('revoke every public link of a file (its uploader or a project ADMIN)').argument('<file>', 'file id, or name with --cut')).action(
      run(async (ctx, ref: string, options: Where) => {
        const client = await ctx.signedIn();
        const found = await resolveFile(client, ref, options);
        const result = await client.files.unshare(found.id);
        ctx.out.done(result, () => unsharedView(result, found.name));
      }),
    ),
    'band file unshare 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d',
  );

  withExamples(
    withWhere(file.command('delete').description('delete a file (its uploader or a project ADMIN)').argument('<file>', 'file id, or name with --cut')).action(
      run(async (ctx, ref: string, options: Where) => {
        const client = await ctx.signedIn();
        const found = await resolveFile(client, ref, options);
        await confirm(ctx.io, `Delete file ${found.name}?`, ctx.options.yes);
        const deleted = await client.files.delete(found.id);
        ctx.out.done(deleted, () => deletedView('file', found.name, deleted));
      }),
    ),
    'band file delete 9d2c1b0a-7e6f-4a5b-8c9d-0e1f2a3b4c5d --yes',
  );
}

function withWhere(command: Command, cutRequired = false): Command {
  const cut = '--cut <cut>';
  const cutHelp = 'cut id or name';
  return (cutRequired ? command.requiredOption(cut, cutHelp) : command.option(cut, `${cutHelp} (to find the file by name)`))
    .option('--vibe <vibe>', 'vibe id or name (to find the cut by name)')
    .option('--project <project>', 'project id or name (to find the cut by name)');
}

/**
 * Reports a bulk upload or download: one error line per failed file, the records with --json, the summary
 * line; exit 3 when some files failed, or the failure's own code when every file failed.
 */
function reportTransfers(
  ctx: Context,
  fileCount: number,
  records: FileRecord[],
  failures: { label: string; error: CliError }[],
  summary: string,
): void {
  for (const { label, error } of failures) {
    // The SDK names the file in some messages ("notes.txt: accepted types are …"): the path is said once.
    const named = `${path.basename(label)}: `;
    ctx.out.error(`${label}: ${error.message.startsWith(named) ? error.message.slice(named.length) : error.message}`, error.requestId);
  }
  if (ctx.out.json) ctx.out.record(records, () => '');
  ctx.out.info(summary);
  const failed = failures.length;
  if (failed === 0) return;
  const exitCode = failed === fileCount ? failures[0]!.error.exitCode : EXIT.partial;
  throw new CliError(`${failed} of ${counted(fileCount, 'file')} failed`, exitCode);
}

async function download(ctx: Context, client: BandClient, file: FileRecord, output: string | undefined, force: boolean): Promise<void> {
  const filename = localName(file);
  if (output === '-') {
    await client.files.download(file.id, { to: ctx.io.stdout });
    return;
  }
  const target = await ctx.saveTarget(output, filename);
  // A download never replaces a file by surprise (a take with the same name, a re-run): --force says to.
  if (!force && existsSync(ctx.localPath(target))) throw usageError(`${target} already exists; add --force to overwrite it, or -o to save elsewhere`);
  const progress = await ctx.out.transfers('downloading', 1, file.size);
  const bar = progress.start(path.basename(target), file.size);
  try {
    await client.files.download(file.id, { to: ctx.localPath(target), onProgress: ({ loaded }) => bar.update(loaded) });
    bar.finish(true);
  } catch (error) {
    bar.finish(false);
    throw error;
  } finally {
    progress.stop();
  }
  ctx.out.done(file, () => savedView(file, target));
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 64) throw usageError(`--jobs must be a whole number from 1 to 64, not "${value}"`);
  return number;
}

/**
 * A STEM ZIP's entry by its index or its path, with its preview: paged from the server (a ZIP lists thousands).
 * No preview (not audio, PREVIEW_STEMS off) or one not made yet is told plainly, as a file's is.
 */
async function findEntry(client: BandClient, zip: FileRecord, wanted: string): Promise<{ index: number; path: string; preview: NonNullable<StemEntry['preview']> }> {
  if (zip.type !== 'STEM') throw usageError(`${zip.name} is not a STEM ZIP: --entry names an entry of one`);
  const byIndex = /^\d+$/.test(wanted) ? Number(wanted) : null;
  let index = 0;
  for (let cursor: string | undefined; ; ) {
    const page = await client.files.entries(zip.id, cursor === undefined ? {} : { cursor });
    for (const entry of page.entries) {
      if (byIndex === index || (byIndex === null && entry.path === wanted)) {
        if (!entry.preview) throw new CliError(`${entry.path} has no preview (not audio, or the server makes none of STEM entries: PREVIEW_STEMS)`, EXIT.notFound);
        return { index, path: entry.path, preview: entry.preview };
      }
      index++;
    }
    if (page.nextCursor === null) throw new CliError(`${zip.name} has no entry ${wanted}`, EXIT.notFound);
    cursor = page.nextCursor;
  }
}
