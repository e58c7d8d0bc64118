import type { BandClient, PersonalAccessToken, TokenScope } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import { parseDuration } from '../durations.js';
import { usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { confirm } from '../prompt.js';
import { withExamples } from '../render.js';
import { pick, projectId } from '../resolve.js';
import { createdTokenView, revokedTokenView, tokenTable } from '../views/tokens.js';

/** The server's bounds of a token's lifetime, in seconds. */
const MIN_EXPIRY = 3600;
const MAX_EXPIRY = 31_622_400;

interface CreateOptions {
  scope: string;
  /** Absent: every project of the owner. */
  project?: string[];
  /** Seconds. */
  expires: number;
}

export function register(token: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(token, 'band token create ci --scope write --project "Summer EP" --expires 90d', 'band token list');

  withExamples(
    token
      .command('create')
      .description('create a personal access token for CI and scripts (BAND_TOKEN) and print it once')
      .argument('<name>', 'what the token is for')
      .option('--scope <scope>', 'read (GET only), write (all you may do but review) or review (read, and approve or request changes)', 'read')
      .option('--project <project>', 'limit the token to this project (id or name); repeat for several; default: all yours', collect)
      .requiredOption('--expires <duration>', 'lifetime, 1h to 366d (12h, 90d, 52w)', parseDuration)
      .addHelpText('after', '\nOutput: the token alone on stdout (it is not shown again); with --json, the token record plus "token".')
      .action(
        run(async (ctx, name: string, options: CreateOptions) => {
          if (options.expires < MIN_EXPIRY || options.expires > MAX_EXPIRY) throw usageError('--expires: a token lives 1h to 366d');
          const client = await ctx.signedIn();
          const projectIds = await Promise.all((options.project ?? []).map((ref) => projectId(client, ref)));
          const created = await client.tokens.create({
            name,
            scope: scope(options.scope),
            expiresIn: options.expires,
            ...(projectIds.length > 0 ? { projectIds } : {}),
          });
          ctx.out.record(created, () => created.token);
          ctx.out.info(createdTokenView(created));
        }),
      ),
    'band token create ci --scope write --project "Summer EP" --expires 90d',
    'band token create dashboards --expires 30d --json',
  );

  withExamples(
    token
      .command('list')
      .description('your live personal access tokens, newest first')
      .action(
        run(async (ctx) => {
          const client = await ctx.signedIn();
          const tokens = await client.tokens.list();
          const names = await projectNames(client, tokens);
          ctx.out.record(tokens, () => tokenTable(ctx.out, tokens, names));
        }),
      ),
    'band token list',
    'band token list --json',
  );

  withExamples(
    token
      .command('revoke')
      .description('revoke a personal access token: it stops working at once')
      .argument('<token>', 'token id or name')
      .action(
        run(async (ctx, ref: string) => {
          const client = await ctx.signedIn();
          const found = pick(await client.tokens.list(), ref, 'token', 'among your tokens', (t) => `${t.name} (${t.tokenHint})`);
          await confirm(ctx.io, `Revoke token ${found.name} (${found.tokenHint})?`, ctx.options.yes);
          const revoked = await client.tokens.delete(found.id);
          ctx.out.record(revoked, () => revokedTokenView(found));
        }),
      ),
    'band token revoke ci',
    'band token revoke 3f0c…',
  );
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function scope(value: string): TokenScope {
  const lower = value.toLowerCase();
  if (lower !== 'read' && lower !== 'write' && lower !== 'review') throw usageError(`--scope must be read, write or review, not "${value}"`);
  return lower;
}

/** The names of the projects tokens are limited to, by id (a project since left or deleted has none). */
async function projectNames(client: BandClient, tokens: readonly PersonalAccessToken[]): Promise<Map<string, string>> {
  if (tokens.every((t) => t.projectIds === null)) return new Map();
  return new Map((await client.projects.list()).map((p) => [p.id, p.name]));
}
