import type { Command } from 'commander';
import type { Run } from '../../context.js';
import { usageError } from '../../exit-codes.js';
import { withExamples } from '../../render.js';
import { profileView } from '../../views/auth.js';

export function addProfile(auth: Command, run: Run): void {
  withExamples(
    auth
      .command('profile')
      .description('show your display name and avatar, or change them')
      .option('--name <name>', 'a new display name')
      .option('--avatar <path>', 'a new avatar: a JPEG, PNG, GIF or WebP image of at most 5 MiB')
      .option('--remove-avatar', 'remove your avatar')
      .action(
        run(async (ctx, options: { name?: string; avatar?: string; removeAvatar?: boolean }) => {
          if (options.avatar !== undefined && options.removeAvatar) throw usageError('--avatar and --remove-avatar exclude each other');
          const client = await ctx.signedIn();
          let me = options.name === undefined ? null : await client.auth.updateMe({ name: options.name });
          if (options.avatar !== undefined) me = await client.auth.setAvatar(ctx.localPath(options.avatar));
          if (options.removeAvatar) me = await client.auth.removeAvatar();
          const shown = me ?? (await client.auth.me());
          ctx.out.record(shown, () => profileView(shown));
        }),
      ),
    'band auth profile',
    'band auth profile --name "Ana B." --avatar me.jpg',
    'band auth profile --remove-avatar',
  );
}
