// What you are emailed about (§19): `show` the preferences, `set` kinds on or off and the digest's frequency.
// Every notification email also carries a one-click unsubscribe link for its kind.
import type { DigestFrequency, NotificationPreferencesChange } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { commandRunner } from '../context.js';
import { usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { withExamples } from '../render.js';
import { notificationPreferencesView } from '../views/notifications.js';

function onOff(flag: string) {
  return (value: string): boolean => {
    const lower = value.trim().toLowerCase();
    if (lower === 'on') return true;
    if (lower === 'off') return false;
    throw usageError(`${flag} takes on or off, not "${value}"`);
  };
}

function frequency(value: string): DigestFrequency {
  const lower = value.trim().toLowerCase();
  if (lower === 'daily' || lower === 'weekly' || lower === 'off') return lower;
  throw usageError(`--digest takes daily, weekly or off, not "${value}"`);
}

interface SetOptions {
  mentions?: boolean;
  replies?: boolean;
  reviewRequests?: boolean;
  newVersions?: boolean;
  webhooks?: boolean;
  digest?: DigestFrequency;
}

export function register(notify: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(notify, 'band notify show', 'band notify set --mentions off --digest weekly');

  withExamples(
    notify
      .command('show')
      .description('what you are emailed about: each kind on or off, and the digest (daily, weekly or off)')
      .addHelpText('after', '\nWith --json: {email: {mentions, replies, reviewRequests, newVersions, webhooks, digest}, emailEnabled}.')
      .action(
        run(async (ctx) => {
          const client = await ctx.signedIn();
          const preferences = await client.notifications.get();
          ctx.out.record(preferences, () => notificationPreferencesView(preferences));
        }),
      ),
    'band notify show --json',
  );

  withExamples(
    notify
      .command('set')
      .description('turn kinds of notification email on or off, or set the digest; the kinds not given stay')
      .option('--mentions <on|off>', 'a comment mentions you', onOff('--mentions'))
      .option('--replies <on|off>', 'a reply to your comment', onOff('--replies'))
      .option('--review-requests <on|off>', 'a member asks you to review a version', onOff('--review-requests'))
      .option('--new-versions <on|off>', 'a new version of a file you commented on or reviewed', onOff('--new-versions'))
      .option('--webhooks <on|off>', 'one of your webhook endpoints was disabled', onOff('--webhooks'))
      .option('--digest <daily|weekly|off>', "the digest of the rest of your projects' activity (at the server's DIGEST_HOUR UTC; weekly on Mondays)", frequency)
      .addHelpText('after', '\nMentions and replies are mailed at once; the digest only when something happened. Prints the preferences as they are now.')
      .action(
        run(async (ctx, options: SetOptions) => {
          const email: NotificationPreferencesChange['email'] = {
            ...(options.mentions === undefined ? {} : { mentions: options.mentions }),
            ...(options.replies === undefined ? {} : { replies: options.replies }),
            ...(options.reviewRequests === undefined ? {} : { reviewRequests: options.reviewRequests }),
            ...(options.newVersions === undefined ? {} : { newVersions: options.newVersions }),
            ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
            ...(options.digest === undefined ? {} : { digest: options.digest }),
          };
          if (Object.keys(email).length === 0) throw usageError('say what changes: --mentions, --replies, --review-requests, --new-versions, --webhooks or --digest');
          const client = await ctx.signedIn();
          const preferences = await client.notifications.update({ email });
          ctx.out.done(preferences, () => notificationPreferencesView(preferences));
        }),
      ),
    'band notify set --mentions off --digest weekly',
    'band notify set --review-requests on',
  );
}
