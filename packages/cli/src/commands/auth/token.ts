import type { Command } from 'commander';
import type { Run } from '../../context.js';
import { CliError, EXIT } from '../../exit-codes.js';
import { withExamples } from '../../render.js';

export function addToken(auth: Command, run: Run): void {
  withExamples(
    auth
      .command('token')
      .description('print a valid access token (refreshed when needed), for scripts')
      .action(
        run(async (ctx) => {
          const client = await ctx.signedIn();
          const token = await client.freshAccessToken();
          if (!token) throw new CliError('not logged in: run band auth login', EXIT.auth);
          // The token is for use after this run: a BAND_EMAIL sign-in must not be logged out at its end.
          ctx.keepSession();
          ctx.io.stdout.write(`${token}\n`);
        }),
      ),
    'curl -H "Authorization: Bearer $(band auth token)" http://localhost:3000/api/auth/me',
  );
}
