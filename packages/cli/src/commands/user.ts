import type { AdminUser, BandClient } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import { notFoundError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';
import { adminUserTable, userActiveView } from '../views/admin.js';

export function register(user: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(user, 'band user list', 'band user deactivate someone@example.com');

  withExamples(
    user
      .command('list')
      .description('every account, by email, with its role, whether it is active and its last sign-in (site admins)')
      .action(
        run(async (ctx) => {
          const users = await (await ctx.signedIn()).admin.users();
          ctx.out.record(users, () => adminUserTable(ctx.out, users));
        }),
      ),
    'band user list',
    'band user list --json',
  );

  for (const active of [false, true]) {
    withExamples(
      user
        .command(active ? 'activate' : 'deactivate')
        .description(
          active
            ? 'let a deactivated account sign in again (site admins)'
            : 'deactivate an account: it cannot sign in, its sessions and tokens end at once, its files stay (site admins)',
        )
        .argument('<email>', 'the account\'s email (or id)')
        .action(
          run(async (ctx, ref: string) => {
            const client = await ctx.signedIn();
            const changed = await client.admin.setActive((await findUser(client, ref)).id, active);
            ctx.out.record(changed, () => userActiveView(changed));
          }),
        ),
      `band user ${active ? 'activate' : 'deactivate'} someone@example.com`,
    );
  }
}

async function findUser(client: BandClient, ref: string): Promise<AdminUser> {
  const wanted = ref.trim().toLowerCase();
  const found = (await client.admin.users()).find((user) => user.id === wanted || user.email === wanted);
  if (!found) throw notFoundError(`no account with email "${ref}"`);
  return found;
}
