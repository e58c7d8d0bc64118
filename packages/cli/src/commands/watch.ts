import { BandApiError, type FileRecord, type Member, type ProjectEvent } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { type Context, run } from '../context.js';
import { formatBytes, withExamples } from '../render.js';
import { projectId } from '../resolve.js';

interface WatchOptions {
  project?: string;
}

export function register(program: Command): void {
  withExamples(
    program
      .command('watch')
      .description('print the events of your projects as they happen, one line each (--json: one JSON object per line)')
      .option('--project <project>', 'only this project (id or name)')
      .action(run(watch)),
    'band watch',
    'band watch --project Demo',
    'band watch --json | jq -r .type',
  );
}

/**
 * Runs until interrupted. The stored access token outlives no reconnection after it expired (the SDK holds
 * no refresh token for a stored profile): the context refreshes it under the profile's lock, and the watch goes on.
 */
async function watch(ctx: Context, options: WatchOptions): Promise<void> {
  const client = await ctx.signedIn();
  const only = options.project === undefined ? undefined : await projectId(client, options.project);
  const names = new Map<string, string>();
  const loadNames = async () => {
    for (const project of await client.projects.list()) names.set(project.id, project.name);
  };
  await loadNames();
  for (;;) {
    try {
      await ctx.retryingExpiry(
        (signedIn) =>
          signedIn.events.subscribe({
            projectId: only,
            onHello: (hello) => {
              const count = only === undefined ? hello.projectIds.length : 1;
              ctx.out.info(`watching ${count} project${count === 1 ? '' : 's'} (Ctrl-C to stop)`);
            },
            onEvent: (event) => {
              // A project joined meanwhile: its name is there for the events after this one.
              if (!names.has(event.projectId)) void loadNames().catch(() => undefined);
              if (event.type === 'project.updated') names.set(event.projectId, (event.data.project as { name: string }).name);
              // One compact object per line, so the stream pipes into jq and line-based tools.
              if (ctx.out.json) process.stdout.write(`${JSON.stringify(event)}\n`);
              else ctx.out.record(event, () => eventLine(ctx, event, names.get(event.projectId) ?? event.projectId));
            },
            onDisconnect: ({ code, retryInMs }) => {
              ctx.out.info(`connection lost (${code}); reconnecting in ${(retryInMs / 1000).toFixed(1)} s; events in between are not replayed`);
            },
          }).closed,
      );
      return;
    } catch (error) {
      const expired = error instanceof BandApiError && error.code === 'TOKEN_EXPIRED';
      if (!expired || ctx.source !== 'stored') throw error;
    }
  }
}

function eventLine(ctx: Context, event: ProjectEvent, projectName: string): string {
  const time = `${event.at.slice(0, 10)} ${event.at.slice(11, 19)}`;
  return `${ctx.out.dim(time)}  ${ctx.out.bold(projectName)}  ${event.type}  ${event.actor.name} ${describe(event)}`;
}

/** What the actor did, in words. */
function describe(event: ProjectEvent): string {
  const { data } = event;
  const named = (key: string) => `"${(data[key] as { name: string }).name}"`;
  switch (event.type) {
    case 'project.updated':
      return `updated the project (now ${named('project')})`;
    case 'project.deleted':
      return 'deleted the project';
    case 'member.added':
      return `added ${(data.member as Member).name} as ${(data.member as Member).role}`;
    case 'member.removed':
      return data.userId === event.actor.id ? 'left the project' : `removed member ${String(data.userId)}`;
    case 'member.role_changed':
      return `made ${(data.member as Member).name} ${(data.member as Member).role}`;
    case 'vibe.created':
      return `created vibe ${named('vibe')}`;
    case 'vibe.updated':
      return `updated vibe ${named('vibe')}`;
    case 'vibe.deleted':
      return `deleted vibe ${String(data.vibeId)}`;
    case 'vibes.reordered':
      return 'reordered the vibes';
    case 'cut.created':
      return `created cut ${named('cut')}`;
    case 'cut.updated':
      return `updated cut ${named('cut')}`;
    case 'cut.moved':
      return `moved cut ${named('cut')} to another vibe`;
    case 'cut.deleted':
      return `deleted cut ${String(data.cutId)}`;
    case 'file.uploaded': {
      const file = data.file as FileRecord;
      return `uploaded "${file.name}" (${file.type}, ${formatBytes(file.size)})`;
    }
    case 'file.deleted':
      return `deleted file ${String(data.fileId)}`;
    case 'file.shared':
      return `shared file ${String(data.fileId)}${data.expiresAt ? ` until ${String(data.expiresAt)}` : ''}`;
  }
}
