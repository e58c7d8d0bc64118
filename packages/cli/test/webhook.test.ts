import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CreatedWebhook, Webhook, WebhookDelivery } from '@bandcollab/sdk';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { type CliUser, cliUser, registerWithCli } from './support/cli.js';
import { until } from '../../server/test/support/until.js';

// band webhook add|list|show|edit|test|deliveries|redeliver|rotate-secret|remove against a real server and a
// real receiver on loopback (so the server allows http and private addresses).

let server: TestServer;
let ana: CliUser;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(200).end('thanks');
  });
});
let url: string;

const json = async <T>(user: CliUser, args: string[]) => {
  const result = await user.band([...args, '--json']);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
};

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  server = await startTestServer({ WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' });
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com');
  await json(ana, ['project', 'create', 'Loud']);
});
afterAll(async () => {
  await ana?.cleanup();
  await server?.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});


it('adds a project webhook printing its secret once, tests it, lists its deliveries, redelivers, rotates and removes it', async () => {
  const added = await ana.band(['webhook', 'add', url, '--project', 'Loud', '--events', 'vibe.*,webhook.test']);
  expect(added.exitCode, added.stderr).toBe(0);
  const secret = added.stdout.trim();
  expect(secret).toMatch(/^whsec_/);
  expect(added.stderr).toContain('not shown again');

  const [listed] = await json<Webhook[]>(ana, ['webhook', 'list', '--project', 'Loud']);
  expect(listed).toMatchObject({ url, events: ['vibe.*', 'webhook.test'], enabled: true });
  expect(listed).not.toHaveProperty('secret');
  expect((await ana.band(['webhook', 'list', '--project', 'Loud'])).stdout).toMatch(/enabled/);

  expect((await ana.band(['webhook', 'test', listed!.id])).exitCode).toBe(0);
  await until('the test delivery', () => received.length === 1);
  expect(new StandardWebhook(secret).verify(received[0]!.body, received[0]!.headers as Record<string, string>)).toMatchObject({ type: 'webhook.test' });

  let deliveries: WebhookDelivery[];
  do deliveries = await json<WebhookDelivery[]>(ana, ['webhook', 'deliveries', listed!.id]);
  while (deliveries[0]?.status !== 'succeeded');
  expect((await ana.band(['webhook', 'deliveries', listed!.id])).stdout).toMatch(/webhook\.test\s+succeeded\s+1\s+200 in \d+ ms/);

  expect((await ana.band(['webhook', 'redeliver', listed!.id, deliveries[0]!.id])).exitCode).toBe(0);
  await until('the redelivery', () => received.length === 2);
  expect(received[1]!.headers['webhook-id']).toBe(deliveries[0]!.id);

  // --limit and --all, as on every paged list: a list cut short says so on stderr.
  expect((await ana.band(['webhook', 'test', listed!.id])).exitCode).toBe(0);
  const first = await ana.band(['webhook', 'deliveries', listed!.id, '--limit', '1', '--json']);
  expect(JSON.parse(first.stdout)).toHaveLength(1);
  expect(first.stderr).toContain('the first 1 deliveries; --limit <n> or --all for more');
  const every = await ana.band(['webhook', 'deliveries', listed!.id, '--all', '--json']);
  expect([JSON.parse(every.stdout).length, every.stderr]).toEqual([2, '']);
  expect(await ana.band(['webhook', 'deliveries', listed!.id, '--all', '--limit', '1'])).toMatchObject({ exitCode: 2, stderr: expect.stringContaining('--all and --limit') });
  expect(await ana.band(['webhook', 'deliveries', listed!.id, '--limit', '0'])).toMatchObject({ exitCode: 2, stderr: expect.stringContaining('--limit must be a whole number') });

  const rotated = await json<CreatedWebhook>(ana, ['webhook', 'rotate-secret', listed!.id]);
  expect(rotated.secret).not.toBe(secret);
  const edited = await json<Webhook>(ana, ['webhook', 'edit', listed!.id, '--disable', '--description', 'CI']);
  expect(edited).toMatchObject({ enabled: false, description: 'CI' });
  expect((await ana.band(['webhook', 'show', listed!.id])).stdout).toContain('disabled');

  expect((await ana.band(['webhook', 'remove', listed!.id, '--yes'])).exitCode).toBe(0);
  expect(await json<Webhook[]>(ana, ['webhook', 'list', '--project', 'Loud'])).toEqual([]);
  expect((await ana.band(['webhook', 'add', url, '--format', 'teams'])).exitCode).toBe(2);
});
