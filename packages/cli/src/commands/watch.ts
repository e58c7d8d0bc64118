import type { Command } from 'commander';
import { type Context, commandRunner } from '../context.js';
import type { Io } from '../io.js';
import { withExamples } from '../render.js';
import { projectId } from '../resolve.js';
import { disconnectedView, eventLine, watchingView } from '../views.js';

interface WatchOptions {
  project?: string;
}

export function register(command: Command, io: Io): void {
  const run = commandRunner(io);
  withExamples(
    command
      .description('print the events of your projects as they happen, one line each (--json: one JSON object per line)')
      .option('--project <project>', 'only this project (id or name)')
      .action(run(watch)),
    'band watch',
    'band watch --project Demo',
    'band watch --json | jq -r .type',
  );
}

/** Runs until interrupted. The SDK reconnects after a drop, with an access token it refreshed when due. */
async function watch(ctx: Context, options: WatchOptions): Promise<void> {
  const client = await ctx.signedIn();
  const only = options.project === undefined ? undefined : await projectId(client, options.project);
  const names = new Map<string, string>();
  const loadNames = async () => {
    for (const project of await client.projects.list()) names.set(project.id, project.name);
  };
  await loadNames();
  await client.events.subscribe({
    projectId: only,
    onHello: (hello) => {
      const count = only === undefined ? hello.projectIds.length : 1;
      ctx.out.info(watchingView(count));
    },
    onEvent: (event) => {
      // A project joined meanwhile: its name is there for the events after this one.
      if (!names.has(event.projectId)) void loadNames().catch(() => undefined);
      if (event.type === 'project.updated') names.set(event.projectId, event.data.project.name);
      ctx.out.recordLine(event, () => eventLine(ctx.out, event, names.get(event.projectId) ?? event.projectId));
    },
    onDisconnect: ({ code, retryInMs }) => {
      ctx.out.info(disconnectedView(code, retryInMs));
    },
  }).closed;
}
