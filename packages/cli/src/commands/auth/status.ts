import type { Command } from 'commander';
import { type Context, DEFAULT_API_URL, type Run } from '../../context.js';
import { originOf } from '../../settings.js';
import { withExamples } from '../../render.js';
import { statusView, type StoredServer } from '../../views/auth.js';

export function addStatus(auth: Command, run: Run): void {
  withExamples(
    auth
      .command('status')
      .description('who you are, on which server, and where the credentials are kept')
      .action(
        run(async (ctx) => {
          const client = await ctx.signedIn();
          const { me, token } = await client.tokens.current();
          const location = await credentialLocation(ctx);
          const where = { apiUrl: ctx.apiUrl, profile: ctx.profile, credentials: location, servers: storedServers(ctx) };
          if (!token) return ctx.out.record(me, () => statusView(me, where));
          // The projects a token reaches are all it lists: their names, for the ids it is limited to.
          const projectNames = new Map((await client.projects.list()).map((p) => [p.id, p.name]));
          ctx.out.record({ ...me, token }, () => statusView(me, where, { token, projectNames }));
        }),
      ),
    'band auth status',
    'band auth status --json',
  );
}

/** The servers this profile is logged in to, the default one marked (the servers without flags or BAND_API_URL). */
function storedServers(ctx: Context): StoredServer[] {
  const defaultOrigin = originOf(ctx.settings.apiUrl ?? DEFAULT_API_URL);
  return Object.entries(ctx.settings.logins ?? {}).map(([origin, login]) => ({ origin, user: login.user, isDefault: origin === defaultOrigin }));
}

async function credentialLocation(ctx: Context): Promise<string> {
  if (ctx.source === 'BAND_TOKEN') return 'BAND_TOKEN environment variable (nothing stored)';
  if (ctx.source === 'BAND_EMAIL') return 'BAND_EMAIL and BAND_PASSWORD, for this run only (nothing stored)';
  const store = await ctx.credentialStore();
  return store?.kind === 'file' ? `${store.location} (file, mode 0600)` : 'the OS keychain';
}
