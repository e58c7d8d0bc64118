import type { Command } from 'commander';
import type { Run } from '../../context.js';
import { usageError } from '../../exit-codes.js';
import { askSecret, confirm, isInteractive, readStdin } from '../../prompt.js';
import { withExamples } from '../../render.js';
import { accountDeletedView } from '../../views/auth.js';

export function addDeleteAccount(auth: Command, run: Run): void {
  withExamples(
    auth
      .command('delete-account')
      .description('delete your account for good: projects where you are the only member go with it, your files in others stay')
      .option('--password-stdin', 'read the password from stdin (empty for an account without a password)')
      .action(
        run(async (ctx, options: { passwordStdin?: boolean }) => {
          const client = await ctx.signedIn();
          const me = await client.auth.me();
          await confirm(
            ctx.io,
            `Delete your account ${me.email} on ${ctx.apiUrl}, with every project where you are the only member?`,
            ctx.options.yes,
          );
          let password: string;
          if (options.passwordStdin) password = await readStdin(ctx.io);
          else if (isInteractive(ctx.io)) password = await askSecret(ctx.io, 'Password (empty if your account has none): ');
          else throw usageError('--password-stdin is required when not on a terminal');
          await client.auth.deleteAccount(password === '' ? { confirm: me.email } : { password });
          await (await ctx.credentialStore())?.remove();
          await ctx.forgetSignIn();
          ctx.out.record({ id: me.id, deleted: true }, () => accountDeletedView(me.email, ctx.apiUrl));
        }),
      ),
    'band auth delete-account',
    'band --yes auth delete-account --password-stdin < password.txt',
  );
}
