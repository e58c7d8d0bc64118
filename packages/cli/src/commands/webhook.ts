import type { WebhookDelivery, WebhookFormat } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { commandRunner, type Context } from '../context.js';
import { usageError } from '../exit-codes.js';
import type { Factory } from '../factory.js';
import { confirm } from '../prompt.js';
import { noteLeftOut, pageSize, type PagingFlags, takeItems, withPaging } from '../paging.js';
import { withExamples } from '../render.js';
import { projectId } from '../resolve.js';
import { createdWebhookView, queuedDeliveryView, webhookDeliveryTable, webhookTable, webhookView } from '../views/webhooks.js';

interface AddOptions {
  project?: string;
  events: string;
  format: string;
  description?: string;
}

interface EditOptions {
  url?: string;
  events?: string;
  description?: string;
  enable?: boolean;
  disable?: boolean;
}

const FORMATS: readonly WebhookFormat[] = ['standard', 'discord', 'slack'];

/** `band webhook deliveries` without --limit or --all: the newest 50 (a page's default). */
const DELIVERIES_SHOWN = 50;

export function register(webhook: Command, factory: Factory): void {
  const run = commandRunner(factory);
  withExamples(webhook, 'band webhook add https://ci.example.com/hook --project "Summer EP" --events "file.uploaded,comment.*"', 'band webhook deliveries <id>');

  withExamples(
    webhook
      .command('add')
      .description("add a webhook endpoint: a project's (you are its ADMIN) or, without --project, your account's (all your projects); prints its secret once")
      .argument('<url>', 'where deliveries are POSTed (https://)')
      .option('--project <project>', 'the project (id or name)')
      .option('--events <types>', 'comma-separated event types, prefix.* or *', '*')
      .option('--format <format>', 'standard (signed JSON), discord or slack', 'standard')
      .option('--description <text>', 'what it is for')
      .addHelpText('after', '\nOutput: the secret alone on stdout (it is not shown again); with --json, the webhook record plus "secret".')
      .action(
        run(async (ctx, url: string, options: AddOptions) => {
          const format = FORMATS.find((known) => known === options.format);
          if (!format) throw usageError(`--format must be one of ${FORMATS.join(', ')}, not "${options.format}"`);
          const client = await ctx.signedIn();
          const project = options.project ? await projectId(client, options.project) : null;
          const created = await client.webhooks.create(project, {
            url,
            events: eventList(options.events),
            format,
            ...(options.description !== undefined ? { description: options.description } : {}),
          });
          ctx.out.record(created, () => created.secret);
          ctx.out.info(createdWebhookView(created, false));
        }),
      ),
    'band webhook add https://ci.example.com/hook --project "Summer EP" --events "review.*,file.uploaded"',
    'band webhook add https://apps.example.com/band --json',
  );

  withExamples(
    webhook
      .command('list')
      .description("a project's webhooks (--project), or your account's")
      .option('--project <project>', 'the project (id or name)')
      .action(
        run(async (ctx, options: { project?: string }) => {
          const client = await ctx.signedIn();
          const webhooks = await client.webhooks.list(options.project ? await projectId(client, options.project) : null);
          ctx.out.record(webhooks, () => webhookTable(ctx.out, webhooks));
        }),
      ),
    'band webhook list --project "Summer EP"',
    'band webhook list --json',
  );

  withExamples(
    webhook
      .command('show')
      .description('one webhook, and why the server disabled it if it did')
      .argument('<id>', 'webhook id')
      .action(
        run(async (ctx, id: string) => {
          const found = await (await ctx.signedIn()).webhooks.get(id);
          ctx.out.record(found, () => webhookView(found));
        }),
      ),
    'band webhook show 3f0c…',
  );

  withExamples(
    webhook
      .command('edit')
      .description('change a webhook: its url, events, description; --enable turns on one the server disabled')
      .argument('<id>', 'webhook id')
      .option('--url <url>', 'a new url')
      .option('--events <types>', 'comma-separated event types, prefix.* or *')
      .option('--description <text>', 'what it is for ("" clears it)')
      .option('--enable', 'turn it on')
      .option('--disable', 'turn it off')
      .action(
        run(async (ctx, id: string, options: EditOptions) => {
          if (options.enable && options.disable) throw usageError('--enable and --disable do not go together');
          const updated = await (await ctx.signedIn()).webhooks.update(id, {
            ...(options.url !== undefined ? { url: options.url } : {}),
            ...(options.events !== undefined ? { events: eventList(options.events) } : {}),
            ...(options.description !== undefined ? { description: options.description || null } : {}),
            ...(options.enable ? { enabled: true } : options.disable ? { enabled: false } : {}),
          });
          ctx.out.record(updated, () => webhookView(updated));
        }),
      ),
    'band webhook edit 3f0c… --events "*"',
    'band webhook edit 3f0c… --enable',
  );

  withExamples(
    webhook
      .command('remove')
      .description('remove a webhook with its delivery log')
      .argument('<id>', 'webhook id')
      .action(
        run(async (ctx, id: string) => {
          const client = await ctx.signedIn();
          const found = await client.webhooks.get(id);
          await confirm(ctx.io, `Remove the webhook to ${found.url}?`, ctx.options.yes);
          const removed = await client.webhooks.delete(id);
          ctx.out.record(removed, () => `Removed the webhook to ${found.url}.`);
        }),
      ),
    'band webhook remove 3f0c… --yes',
  );

  withExamples(
    webhook
      .command('test')
      .description('queue a webhook.test delivery')
      .argument('<id>', 'webhook id')
      .action(run(async (ctx, id: string) => recordDelivery(ctx, await (await ctx.signedIn()).webhooks.test(id)))),
    'band webhook test 3f0c…',
  );

  withExamples(
    withPaging(
      webhook
        .command('deliveries')
        .description('the deliveries of the last 30 days, newest first, with their last attempt')
        .argument('<id>', 'webhook id')
        .option('--status <status>', 'pending, succeeded or failed'),
      DELIVERIES_SHOWN,
    ).action(
      run(async (ctx, id: string, options: PagingFlags & { status?: string }) => {
        const status = options.status;
        if (status !== undefined && status !== 'pending' && status !== 'succeeded' && status !== 'failed') throw usageError('--status must be pending, succeeded or failed');
        // The server answers at most 100 deliveries a page.
        const list = (await ctx.signedIn()).webhooks.listDeliveries(id, { status, limit: pageSize(options, DELIVERIES_SHOWN, 100) });
        const { items, leftOut } = await takeItems(list, (page) => page.deliveries, options, DELIVERIES_SHOWN);
        if (leftOut) noteLeftOut(ctx.out, items.length, 'deliveries');
        ctx.out.record(items, () => webhookDeliveryTable(ctx.out, items));
      }),
    ),
    'band webhook deliveries 3f0c… --status failed',
    'band webhook deliveries 3f0c… --all --json',
  );

  withExamples(
    webhook
      .command('redeliver')
      .description('attempt a delivery again now, with the same webhook-id')
      .argument('<id>', 'webhook id')
      .argument('<delivery>', 'delivery id (band webhook deliveries)')
      .action(run(async (ctx, id: string, delivery: string) => recordDelivery(ctx, await (await ctx.signedIn()).webhooks.redeliver(id, delivery)))),
    'band webhook redeliver 3f0c… 9a1b…',
  );

  withExamples(
    webhook
      .command('rotate-secret')
      .description('a new signing secret, printed once; the old one signs beside it for 24 hours')
      .argument('<id>', 'webhook id')
      .action(
        run(async (ctx, id: string) => {
          const rotated = await (await ctx.signedIn()).webhooks.rotateSecret(id);
          ctx.out.record(rotated, () => rotated.secret);
          ctx.out.info(createdWebhookView(rotated, true));
        }),
      ),
    'band webhook rotate-secret 3f0c…',
  );
}

function recordDelivery(ctx: Context, delivery: WebhookDelivery): void {
  ctx.out.record(delivery, () => queuedDeliveryView(delivery));
}

function eventList(value: string): string[] {
  const events = value.split(',').map((type) => type.trim()).filter((type) => type !== '');
  if (events.length === 0) throw usageError('--events: name at least one event type, or *');
  return events;
}
