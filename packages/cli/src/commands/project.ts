import type { FileType } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import { usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { confirm } from '../prompt.js';
import { withExamples } from '../render.js';
import { projectDetail, projectId } from '../resolve.js';
import { createdView, deletedView, projectTable, projectView, updatedProjectView } from '../views/projects.js';
import { TYPE_LABELS } from '../views/files.js';
import { largestFilesTable } from '../views/storage.js';

interface ProjectFields {
  description?: string;
  image?: string;
}

export function register(project: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(project, 'band project list', 'band project show Demo');

  withExamples(
    project
      .command('list')
      .description('your projects, newest first')
      .action(
        run(async (ctx) => {
          const projects = await (await ctx.signedIn()).projects.list();
          ctx.out.record(projects, () => projectTable(ctx.out, projects));
        }),
      ),
    'band project list',
    'band project list --json',
  );

  withExamples(
    project
      .command('create')
      .description('create a project (you become its ADMIN)')
      .argument('<name>', 'the project name')
      .option('--description <text>', 'a description')
      .option('--image <path>', 'a cover image (JPEG, PNG, GIF or WebP, at most 5 MiB)')
      .action(
        run(async (ctx, name: string, options: ProjectFields) => {
          const client = await ctx.signedIn();
          const created = await client.projects.create({ name, description: options.description, image: ctx.localPath(options.image) });
          ctx.out.done(created, () => createdView('project', created));
        }),
      ),
    'band project create "Summer EP"',
    'band project create Demo --description "Rehearsal takes" --image cover.jpg',
  );

  withExamples(
    project
      .command('show')
      .description('a project with its members, vibes, cuts and files')
      .argument('<project>', 'project id or name')
      .action(
        run(async (ctx, ref: string) => {
          const detail = await projectDetail(await ctx.signedIn(), ref);
          ctx.out.record(detail, () => projectView(ctx.out, detail));
        }),
      ),
    'band project show Demo',
    'band project show 0b6a2c9e-5d1f-4c55-9a43-3f0d1c2b7e10 --json',
  );

  withExamples(
    project
      .command('update')
      .description('change the name, description or cover image (project ADMIN)')
      .argument('<project>', 'project id or name')
      .option('--name <name>', 'a new name')
      .option('--description <text>', 'a new description ("" clears it)')
      .option('--image <path>', 'a new cover image')
      .option('--remove-image', 'remove the cover image')
      .option('--review-approvals <n>', 'review policy: approvals a version needs to be ready (band review status, review.gate_passed)', reviewApprovals)
      .option('--review-no-open-comments', 'review policy: a version is ready only when no comment of its file is open')
      .option('--review-allow-open-comments', 'review policy: open comments do not hold a version back')
      .action(
        run(async (ctx, ref: string, options: ProjectFields & { name?: string; removeImage?: boolean; reviewApprovals?: number; reviewNoOpenComments?: boolean; reviewAllowOpenComments?: boolean }) => {
          if (options.image && options.removeImage) throw usageError('--image and --remove-image exclude each other');
          if (options.reviewNoOpenComments && options.reviewAllowOpenComments) throw usageError('--review-no-open-comments and --review-allow-open-comments exclude each other');
          const noOpenComments = options.reviewNoOpenComments ? true : options.reviewAllowOpenComments ? false : undefined;
          const changes = {
            name: options.name,
            description: options.description === '' ? null : options.description,
            image: options.removeImage ? null : ctx.localPath(options.image),
            reviewPolicy:
              options.reviewApprovals === undefined && noOpenComments === undefined
                ? undefined
                : { ...(options.reviewApprovals === undefined ? {} : { approvals: options.reviewApprovals }), ...(noOpenComments === undefined ? {} : { noOpenComments }) },
          };
          if (Object.values(changes).every((value) => value === undefined)) {
            throw usageError('nothing to change: give --name, --description, --image, --remove-image or a --review-… policy flag');
          }
          const client = await ctx.signedIn();
          const updated = await client.projects.update(await projectId(client, ref), changes);
          ctx.out.done(updated, () => updatedProjectView(updated));
        }),
      ),
    'band project update Demo --name "Demo 2026" --description "Final takes"',
    'band project update Demo --remove-image',
    'band project update Demo --review-approvals 2 --review-no-open-comments   # the policy band review status and review.gate_passed follow',
  );

  withExamples(
    project
      .command('delete')
      .description('delete a project with its vibes, cuts and files (project ADMIN)')
      .argument('<project>', 'project id or name')
      .action(
        run(async (ctx, ref: string) => {
          const client = await ctx.signedIn();
          const id = await projectId(client, ref);
          await confirm(ctx.io, `Delete project ${ref} with all its vibes, cuts and files?`, ctx.options.yes);
          const deleted = await client.projects.delete(id);
          ctx.out.done(deleted, () => deletedView('project', ref, deleted));
        }),
      ),
    'band project delete Demo',
    'band project delete Demo --yes',
  );

  withExamples(
    project
      .command('largest')
      .description("a project's largest files (every version), largest first")
      .argument('<project>', 'project id or name')
      .option('--type <type>', 'only files of one type: CUT, STEM, IMAGE or SESSION', fileType)
      .option('--limit <n>', 'how many (1-100, default 20)', largestLimit)
      .action(
        run(async (ctx, ref: string, options: { type?: FileType; limit?: number }) => {
          const client = await ctx.signedIn();
          const files = await client.projects.largestFiles(await projectId(client, ref), options);
          ctx.out.record(files, () => largestFilesTable(ctx.out, files));
        }),
      ),
    'band project largest Demo',
    'band project largest Demo --type STEM --limit 5 --json',
  );
}

function fileType(value: string): FileType {
  const type = value.toUpperCase() as FileType;
  if (!(type in TYPE_LABELS)) throw usageError(`--type must be CUT, STEM, IMAGE or SESSION, not "${value}"`);
  return type;
}

function largestLimit(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || number < 1 || number > 100) throw usageError(`--limit must be a whole number from 1 to 100, not "${value}"`);
  return number;
}

function reviewApprovals(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || number > 1000) throw usageError(`--review-approvals must be a whole number from 0 to 1000, not "${value}"`);
  return number;
}
