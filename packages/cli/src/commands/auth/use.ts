import type { Command } from 'commander';
import type { Run } from '../../context.js';
import { withExamples } from '../../render.js';
import { originOf } from '../../settings.js';
import { usedServerView } from '../../views/auth.js';

export function addUse(auth: Command, run: Run): void {
  withExamples(
    auth
      .command('use')
      .description('make a server the one band uses by default (when neither --api-url nor BAND_API_URL names one)')
      .argument('<server>', 'the server address, e.g. https://band.example.com')
      .action(
        run(async (ctx, server: string) => {
          const apiUrl = server.replace(/\/+$/, '');
          const login = ctx.settings.logins?.[originOf(apiUrl)];
          await ctx.saveSettings({ ...ctx.settings, apiUrl });
          ctx.out.done({ apiUrl, user: login?.user ?? null }, () => usedServerView(apiUrl, login?.user));
        }),
      ),
    'band auth use https://band.example.com',
    'band auth use http://localhost:3000',
  );
}
