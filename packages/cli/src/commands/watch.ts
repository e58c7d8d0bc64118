import type { BandClient, ProjectEvent } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { type Context, commandRunner } from '../context.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';
import { projectId } from '../resolve.js';
import { disconnectedView, eventLine, watchingView } from '../views/events.js';

interface WatchOptions {
  project?: string;
}

export function register(command: Command, factory: Factory): void {
  const run = commandRunner(factory);
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

/**
 * The names of what events refer to by id (projects, members, vibes, cuts, files): read from each watched
 * project's tree, then kept up to date from the events themselves. A name stays after its thing is deleted,
 * so "deleted vibe" can still say which.
 */
class Names {
  private readonly names = new Map<string, string>();

  constructor(private readonly client: BandClient) {}

  get(id: string): string | undefined {
    return this.names.get(id);
  }

  has(id: string): boolean {
    return this.names.has(id);
  }

  async loadProject(id: string): Promise<void> {
    const detail = await this.client.projects.get(id);
    this.names.set(detail.id, detail.name);
    for (const member of detail.members) this.names.set(member.userId, member.name);
    for (const vibe of detail.vibes) {
      this.names.set(vibe.id, vibe.name);
      for (const cut of vibe.cuts) {
        this.names.set(cut.id, cut.name);
        for (const file of cut.files) this.names.set(file.id, file.name);
      }
    }
  }

  /** Takes the names an event carries (a new vibe, a renamed cut, an uploaded file, a new member). */
  learn(event: ProjectEvent): void {
    switch (event.type) {
      case 'project.updated':
        this.names.set(event.projectId, event.data.project.name);
        break;
      case 'member.added':
      case 'member.role_changed':
        this.names.set(event.data.member.userId, event.data.member.name);
        break;
      case 'vibe.created':
      case 'vibe.updated':
        this.names.set(event.data.vibe.id, event.data.vibe.name);
        break;
      case 'cut.created':
      case 'cut.updated':
      case 'cut.moved':
        this.names.set(event.data.cut.id, event.data.cut.name);
        break;
      case 'file.uploaded':
        this.names.set(event.data.file.id, event.data.file.name);
        break;
      default:
        break;
    }
  }
}

/** Runs until interrupted. The SDK reconnects after a drop, with an access token it refreshed when due. */
async function watch(ctx: Context, options: WatchOptions): Promise<void> {
  const client = await ctx.signedIn();
  const only = options.project === undefined ? undefined : await projectId(client, options.project);
  const names = new Names(client);
  // Events are shown in the order they came, each once the names it needs are loaded.
  let shown: Promise<void> = Promise.resolve();
  const inTurn = (step: () => Promise<void>) => {
    shown = shown.then(step);
  };
  // --json prints the events as they are: no names to look up.
  const loadProject = async (id: string) => {
    if (ctx.out.json) return;
    await names.loadProject(id).catch((error: unknown) => ctx.out.debugLine(`could not read project ${id}: ${String(error)}`));
  };
  await client.events.subscribe({
    projectId: only,
    onHello: (hello) => {
      const watched = only === undefined ? hello.projectIds : [only];
      ctx.out.info(watchingView(watched.length));
      // Events missed while disconnected are not replayed: what they named is read again.
      inTurn(async () => {
        await Promise.all(watched.map(loadProject));
      });
    },
    onEvent: (event) => {
      inTurn(async () => {
        // A project joined meanwhile: its tree is read before its first event is shown.
        if (!names.has(event.projectId) && event.type !== 'project.deleted') await loadProject(event.projectId);
        names.learn(event);
        ctx.out.recordLine(event, () => eventLine(ctx.out, event, (id) => names.get(id)));
      });
    },
    onDisconnect: ({ code, retryInMs }) => {
      ctx.out.info(disconnectedView(code, retryInMs));
    },
  }).closed;
  await shown;
}
