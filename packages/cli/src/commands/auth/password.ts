import type { Command } from 'commander';
import type { Context, Run } from '../../context.js';
import { usageError } from '../../exit-codes.js';
import { askSecret, isInteractive, readStdin } from '../../prompt.js';
import { withExamples } from '../../render.js';
import { passwordChangedView } from '../../views/auth.js';
import { askNewPassword, CHANGE_PROMPTS } from './prompts.js';

export function addPassword(auth: Command, run: Run): void {
  withExamples(
    auth
      .command('password')
      .description('change your password; your other sessions end (personal access tokens only with --revoke-tokens)')
      .option('--password-stdin', 'read the current password and the new one from stdin, on two lines (the first empty for an account without a password)')
      .option('--revoke-tokens', 'also revoke every personal access token of the account')
      .action(
        run(async (ctx, options: { passwordStdin?: boolean; revokeTokens?: boolean }) => {
          const client = await ctx.signedIn();
          let currentPassword: string;
          let newPassword: string;
          if (options.passwordStdin) {
            [currentPassword, newPassword] = await twoLines(ctx);
          } else {
            if (!isInteractive(ctx.io)) throw usageError('--password-stdin is required when not on a terminal');
            currentPassword = await askSecret(ctx.io, 'Current password (empty if your account has none): ');
            newPassword = await askNewPassword(ctx, CHANGE_PROMPTS);
          }
          const changed = await client.auth.changePassword({
            newPassword,
            revokeTokens: options.revokeTokens === true,
            ...(currentPassword === '' ? {} : { currentPassword }),
          });
          ctx.out.record(changed, () => passwordChangedView(ctx.out, changed));
        }),
      ),
    'band auth password',
    'band auth password --revoke-tokens',
    'printf "%s\\n%s\\n" "$OLD" "$NEW" | band auth password --password-stdin',
  );
}

/** The two lines of --password-stdin: the current password (may be empty) and the new one. */
async function twoLines(ctx: Context): Promise<[string, string]> {
  const lines = (await readStdin(ctx.io)).split(/\r?\n/);
  if (lines.length !== 2 || lines[1] === '') throw usageError('--password-stdin takes two lines: the current password, then the new one');
  return [lines[0]!, lines[1]!];
}
