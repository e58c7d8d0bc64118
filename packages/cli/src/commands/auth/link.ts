import type { Command } from 'commander';
import type { Context, Run } from '../../context.js';
import { usageError } from '../../exit-codes.js';
import { withExamples } from '../../render.js';
import { linkedView } from '../../views/auth.js';
import { awaitBrowser, pkcePair } from './browser.js';

export function addLink(auth: Command, run: Run): void {
  withExamples(
    auth
      .command('link')
      .description("link your account to your account at the server's identity provider, so that login --web signs in to it")
      .option('--web', 'in the browser (the only way to link)')
      .action(
        run(async (ctx, options: { web?: boolean }) => {
          if (!options.web) throw usageError('linking happens in the browser: band auth link --web');
          await webLink(ctx);
        }),
      ),
    'band auth link --web',
  );
}

/**
 * Links the identity provider to the signed-in account: the server, asked with the stored credentials,
 * answers the address that starts the link in the browser; the provider comes back with a one-time code
 * that this process redeems with its verifier and credentials, so the link is made for this process only.
 */
async function webLink(ctx: Context): Promise<void> {
  const client = await ctx.signedIn();
  const me = await client.auth.me();
  const { codeVerifier, codeChallenge } = pkcePair();
  const { code, redirectUri } = await awaitBrowser(ctx, {
    start: (cliRedirect) => client.auth.idpLinkUrl({ cliRedirect, codeChallenge }),
    purpose: 'link your account',
    what: 'linking',
    success: 'Back to band, which links your account.',
  });
  await client.auth.linkIdp({ code, redirectUri, codeVerifier });
  ctx.out.done({ linked: true, user: { id: me.id, email: me.email, name: me.name } }, () => linkedView(me, ctx.apiUrl));
}
