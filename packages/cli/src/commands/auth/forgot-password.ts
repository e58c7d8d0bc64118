import type { Command } from 'commander';
import type { Run } from '../../context.js';
import { withExamples } from '../../render.js';
import { forgotPasswordView } from '../../views/auth.js';

export function addForgotPassword(auth: Command, run: Run): void {
  withExamples(
    auth
      .command('forgot-password')
      .description('email yourself a link to choose a new password (the server must have email on)')
      .argument('<email>', "your account's email")
      .action(
        run(async (ctx, email: string) => {
          const result = await ctx.anonymousClient().auth.forgotPassword(email);
          ctx.out.done(result, () => forgotPasswordView(email, ctx.apiUrl));
        }),
      ),
    'band auth forgot-password ana@example.com',
  );
}
