import type { Command } from 'commander';
import type { Run } from '../../context.js';
import { withExamples } from '../../render.js';
import { loggedOutView } from '../../views/auth.js';

export function addLogout(auth: Command, run: Run): void {
  withExamples(
    auth
      .command('logout')
      .description("end the session on the server and forget the credentials stored for it (other servers' stay)")
      .action(
        run(async (ctx) => {
          const store = await ctx.credentialStore();
          const tokens = store ? await store.read() : null;
          if (store && tokens) {
            const client = ctx.anonymousClient();
            client.setTokens({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken });
            await client.auth.logout().catch((error: unknown) => ctx.out.debugLine(`server logout failed: ${String(error)}`));
            await store.remove();
          }
          await ctx.forgetSignIn();
          ctx.out.done({ ok: true }, () => loggedOutView(tokens !== null, ctx.apiUrl));
        }),
      ),
    'band auth logout',
  );
}
