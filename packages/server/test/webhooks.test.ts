// Webhooks (§19) on a real server and a real HTTP receiver on loopback (so the tests turn on
// WEBHOOKS_ALLOW_HTTP and WEBHOOKS_ALLOW_PRIVATE): every delivery is checked with `standardwebhooks`, the
// reference verifier, and with the SDK's verifyWebhook; the retry schedule runs on the server's injected clock.
import 'reflect-metadata';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import postgres from 'postgres';
import { BandClient, verifyWebhook } from '@bandcollab/sdk';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPublisher, projectEvent } from '../src/events/publisher.js';
import { EventsRepository } from '../src/events/repository.js';
import { WebhooksRepository } from '../src/webhooks/repository.js';
import { Logger } from '../src/core/logger.js';
import { Metrics } from '../src/core/metrics.js';
import { Mailer } from '../src/email/mailer.js';
import { EmailsRepository } from '../src/email/repository.js';
import { Notifier } from '../src/notifications/notifier.js';
import { NotificationsRepository } from '../src/notifications/repository.js';
import { expectStatus, seedProject } from './authz/fixture.js';
import { client } from './support/http.js';
import { startLoggedServer } from './support/logged-server.js';
import { spawnServer } from './support/process.js';
import { until } from './support/until.js';
import { startTestServer, storageSettings, type TestServer } from './support/server.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback: records every request, answers with what `answer` says (200 by default). */
async function receiver() {
  const received: Received[] = [];
  const state = { answer: (_n: number): { status: number; headers?: Record<string, string>; body?: string } => ({ status: 200, body: 'ok' }) };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const { status, headers, body } = state.answer(received.length);
      // Status 0: no answer at all (an attempt left in flight).
      if (status !== 0) res.writeHead(status, headers).end(body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, received, state, close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }) };
}

let server: TestServer;
let api: ReturnType<typeof client>;
const receivers: Awaited<ReturnType<typeof receiver>>[] = [];

beforeAll(async () => {
  server = await startTestServer({ WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' });
  api = client(server.url);
});
afterAll(async () => {
  for (const made of receivers.splice(0)) await made.close();
  await server?.close();
});

async function setUp() {
  const hook = await receiver();
  receivers.push(hook);
  const owner = await api.register();
  const project = await seedProject(api, owner.accessToken);
  return { hook, owner, project };
}

const createVibe = (token: string, projectId: string, name: string) =>
  expectStatus(api.request('POST', `/api/projects/${projectId}/vibes`, { token, json: { name } }), 201);

describe('webhook endpoints', () => {
  it('shows the whsec_ secret once, keeps it sealed, and signs every delivery over the exact bytes sent', async () => {
    const { hook, owner, project } = await setUp();
    const created = await expectStatus(
      api.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['vibe.*'], description: 'CI' } }),
      201,
    );
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    expect(created).toMatchObject({ projectId: project.id, url: hook.url, events: ['vibe.*'], format: 'standard', enabled: true, disabledReason: null });
    const shown = await expectStatus(api.request('GET', `/api/webhooks/${created.id}`, { token: owner.accessToken }), 200);
    expect(shown).not.toHaveProperty('secret');
    const listed = await expectStatus(api.request('GET', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken }), 200);
    expect(listed.map((webhook: { id: string }) => webhook.id)).toEqual([created.id]);
    expect(JSON.stringify(listed)).not.toContain(created.secret.slice(6));
    const [stored] = await server.sql<{ secret: Buffer }[]>`select secret from webhooks where id = ${created.id}`;
    expect(stored!.secret.toString('latin1')).not.toContain(created.secret.slice(6));

    const vibe = await createVibe(owner.accessToken, project.id, 'Second');
    // A comment event is not among vibe.*: only the vibe's delivery arrives.
    const [delivery] = await until('the delivery', () => hook.received.length > 0 && hook.received);
    const headers = delivery!.headers as Record<string, string>;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toMatch(/^bandcollab-webhooks\//);
    expect(new Webhook(created.secret).verify(delivery!.body, headers)).toMatchObject({ type: 'vibe.created' });
    expect(verifyWebhook(created.secret, headers, delivery!.body)).toMatchObject({ type: 'vibe.created' });
    expect(() => verifyWebhook(created.secret, headers, `${delivery!.body} `)).toThrow();
    const body = JSON.parse(delivery!.body);
    expect(body).toEqual({
      type: 'vibe.created',
      timestamp: expect.any(String),
      data: { id: expect.any(String), projectId: project.id, actor: { id: owner.user.id, name: owner.user.name }, at: body.timestamp, data: { vibe: expect.objectContaining({ id: vibe.id, name: 'Second' }) } },
    });
    const log = await until('the succeeded delivery', async () => {
      const page = await expectStatus(api.request('GET', `/api/webhooks/${created.id}/deliveries`, { token: owner.accessToken }), 200);
      return page.deliveries[0]?.status === 'succeeded' && page;
    });
    expect(log.deliveries[0]).toMatchObject({ id: headers['webhook-id'], type: 'vibe.created', nextAttemptAt: null });
    expect(log.deliveries[0].attempts).toEqual([{ at: expect.any(String), durationMs: expect.any(Number), statusCode: 200, error: null, responseBody: 'ok' }]);
  });

  it('keeps the webhook-id across a retried delivery: fails at first, succeeds after the schedule, the clock moved on', async () => {
    const { hook, owner, project } = await setUp();
    hook.state.answer = (n) => (n === 1 ? { status: 500, body: 'down' } : { status: 204 });
    const created = await expectStatus(api.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['*'] } }), 201);
    await createVibe(owner.accessToken, project.id, 'Retried');
    await until('the first attempt', () => hook.received.length === 1);
    const first = await until('the failed attempt logged', async () => {
      const page = await expectStatus(api.request('GET', `/api/webhooks/${created.id}/deliveries`, { token: owner.accessToken }), 200);
      return page.deliveries[0]?.attempts.length === 1 && page.deliveries[0];
    });
    expect(first).toMatchObject({ status: 'pending', attempts: [{ statusCode: 500, responseBody: 'down' }] });
    const wait = Date.parse(first.nextAttemptAt) - Date.parse(first.attempts[0].at);
    expect(wait).toBeGreaterThanOrEqual(4_500 - 50);
    expect(wait).toBeLessThanOrEqual(5_500 + 50);
    await delay(1500);
    expect(hook.received).toHaveLength(1);
    server.clock.advance(10);
    await until('the second attempt', () => hook.received.length === 2, 5000);
    expect(hook.received[1]!.headers['webhook-id']).toBe(hook.received[0]!.headers['webhook-id']);
    expect(hook.received[1]!.body).toBe(hook.received[0]!.body);
    new Webhook(created.secret).verify(hook.received[1]!.body, hook.received[1]!.headers as Record<string, string>);
    const done = await until('the delivery succeeded', async () => {
      const page = await expectStatus(api.request('GET', `/api/webhooks/${created.id}/deliveries`, { token: owner.accessToken }), 200);
      return page.deliveries[0]?.status === 'succeeded' && page.deliveries[0];
    });
    expect(done.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([500, 204]);

    // Redeliver: a new attempt now, the same webhook-id.
    await expectStatus(api.request('POST', `/api/webhooks/${created.id}/deliveries/${done.id}/redeliver`, { token: owner.accessToken }), 202);
    await until('the redelivery', () => hook.received.length === 3);
    expect(hook.received[2]!.headers['webhook-id']).toBe(done.id);
  });

  it('pages the delivery log by ?limit and ?cursor, newest first, as the SDK\'s listDeliveries iterates it', async () => {
    const { hook, owner, project } = await setUp();
    const created = await expectStatus(api.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['vibe.*'] } }), 201);
    for (const name of ['One', 'Two', 'Three']) await createVibe(owner.accessToken, project.id, name);
    const log = `/api/webhooks/${created.id}/deliveries`;
    const all = await until('three deliveries logged', async () => {
      const page = await expectStatus(api.request('GET', log, { token: owner.accessToken }), 200);
      return page.deliveries.length === 3 && page;
    });
    expect(all.nextCursor).toBeNull();
    const first = await expectStatus(api.request('GET', `${log}?limit=2`, { token: owner.accessToken }), 200);
    expect(first.deliveries.map((d: { id: string }) => d.id)).toEqual(all.deliveries.slice(0, 2).map((d: { id: string }) => d.id));
    const second = await expectStatus(api.request('GET', `${log}?limit=2&cursor=${first.nextCursor}`, { token: owner.accessToken }), 200);
    expect([second.deliveries.map((d: { id: string }) => d.id), second.nextCursor]).toEqual([[all.deliveries[2].id], null]);
    for (const bad of ['limit=0', 'limit=101', 'limit=two', 'cursor=abc']) {
      const answer = await expectStatus(api.request('GET', `${log}?${bad}`, { token: owner.accessToken }), 400);
      expect(answer.errors.map((e: { field: string }) => e.field), bad).toEqual([bad.split('=')[0]]);
    }
    const sdk = new BandClient({ baseUrl: server.url, accessToken: owner.accessToken });
    const iterated = [];
    for await (const delivery of sdk.webhooks.listDeliveries(created.id, { limit: 1 })) iterated.push(delivery.id);
    expect(iterated).toEqual(all.deliveries.map((d: { id: string }) => d.id));
  });

  it('enqueues nothing for an event whose transaction rolled back', async () => {
    const { hook, owner, project } = await setUp();
    const created = await expectStatus(api.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['*'] } }), 201);
    // The server's own publisher, on a pool of the test's (as the server's, it maps columns to camelCase).
    const sql = postgres(server.config.databaseUrl!, { max: 2, onnotice: () => undefined, transform: { column: { from: postgres.toCamel, to: postgres.fromCamel } } });
    // Email is off on this server: the notifier the publisher calls queues nothing.
    const mailer = new Mailer(new EmailsRepository(sql), server.config, 'unused', new Logger('error'), new Metrics());
    const notifier = new Notifier(new NotificationsRepository(sql), mailer, server.config, 'unused');
    const publisher = new EventPublisher(new EventsRepository(sql), new WebhooksRepository(sql), server.clock, notifier);
    const principal = { userId: owner.user.id, name: owner.user.name };
    await expect(
      sql.begin(async (tx) => {
        await publisher.publish(tx, projectEvent(principal, project.id, 'project.updated', { id: project.id, name: 'Never' } as never));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const [counts] = await server.sql<{ deliveries: number; jobs: number }[]>`
      select (select count(*)::int from webhook_deliveries where webhook_id = ${created.id}) as deliveries,
             (select count(*)::int from jobs where kind = 'webhook_delivery' and payload->>'webhookId' = ${created.id}) as jobs`;
    expect(counts).toEqual({ deliveries: 0, jobs: 0 });
    // The same publish committed is delivered.
    await sql.begin((tx) => publisher.publish(tx, projectEvent(principal, project.id, 'project.updated', { id: project.id, name: 'Kept' } as never)));
    await until('the committed delivery', () => hook.received.length === 1);
    await sql.end({ timeout: 1 });
  });

  it('disables the endpoint on 410 Gone, with the reason shown to its owner', async () => {
    const { hook, owner, project } = await setUp();
    hook.state.answer = () => ({ status: 410 });
    const created = await expectStatus(api.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['*'] } }), 201);
    await expectStatus(api.request('POST', `/api/webhooks/${created.id}/test`, { token: owner.accessToken }), 202);
    const disabled = await until('the endpoint disabled', async () => {
      const shown = await expectStatus(api.request('GET', `/api/webhooks/${created.id}`, { token: owner.accessToken }), 200);
      return !shown.enabled && shown;
    });
    expect(disabled.disabledReason).toMatch(/410/);
    expect(JSON.parse(hook.received[0]!.body).type).toBe('webhook.test');
    await createVibe(owner.accessToken, project.id, 'After');
    await delay(500);
    expect(hook.received).toHaveLength(1);
  });

  it('disables an endpoint whose deliveries have all failed for 5 days, saying so', async () => {
    const { hook, owner, project } = await setUp();
    hook.state.answer = () => ({ status: 500 });
    const created = await expectStatus(api.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['*'] } }), 201);
    await expectStatus(api.request('POST', `/api/webhooks/${created.id}/test`, { token: owner.accessToken }), 202);
    await until('the first failure', async () => {
      const page = await expectStatus(api.request('GET', `/api/webhooks/${created.id}/deliveries`, { token: owner.accessToken }), 200);
      return page.deliveries[0]?.attempts.length === 1;
    });
    const shown = await expectStatus(api.request('GET', `/api/webhooks/${created.id}`, { token: owner.accessToken }), 200);
    expect(shown).toMatchObject({ enabled: true, disabledReason: null });
    // Five days on the server's clock since that first failure.
    server.clock.advance(5 * 86_400 + 60);
    const again = await expectStatus(api.request('POST', '/api/auth/login', { json: { email: owner.user.email, password: owner.password } }), 200);
    const disabled = await until('the endpoint disabled', async () => {
      const webhook = await expectStatus(api.request('GET', `/api/webhooks/${created.id}`, { token: again.accessToken }), 200);
      return !webhook.enabled && webhook;
    }, 15_000);
    expect(disabled.disabledReason).toMatch(/5 days/);
    const page = await expectStatus(api.request('GET', `/api/webhooks/${created.id}/deliveries`, { token: again.accessToken }), 200);
    expect(page.deliveries[0]).toMatchObject({ status: 'failed', nextAttemptAt: null });
  });

  it('signs with both secrets for 24 hours after a rotation', async () => {
    const { hook, owner, project } = await setUp();
    const created = await expectStatus(api.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['*'] } }), 201);
    const rotated = await expectStatus(api.request('POST', `/api/webhooks/${created.id}/secret`, { token: owner.accessToken }), 200);
    expect(rotated.secret).not.toBe(created.secret);
    await expectStatus(api.request('POST', `/api/webhooks/${created.id}/test`, { token: owner.accessToken }), 202);
    const [delivery] = await until('the test delivery', () => hook.received.length === 1 && hook.received);
    const headers = delivery!.headers as Record<string, string>;
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    new Webhook(rotated.secret).verify(delivery!.body, headers);
    new Webhook(created.secret).verify(delivery!.body, headers);
    server.clock.advance(24 * 3600 + 60);
    const again = await expectStatus(api.request('POST', '/api/auth/login', { json: { email: owner.user.email, password: owner.password } }), 200);
    await expectStatus(api.request('POST', `/api/webhooks/${created.id}/test`, { token: again.accessToken }), 202);
    await until('the second test delivery', () => hook.received.length === 2);
    const later = hook.received[1]!;
    expect((later.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(() => new Webhook(created.secret).verify(later.body, later.headers as Record<string, string>)).toThrow();
  });

  it('lets only a project ADMIN manage the project endpoints, and only the owner an account endpoint', async () => {
    const { hook, owner, project } = await setUp();
    const stranger = await api.register();
    await expectStatus(api.request('POST', `/api/projects/${project.id}/webhooks`, { token: stranger.accessToken, json: { url: hook.url, events: ['*'] } }), 404);
    const mine = await expectStatus(api.request('POST', '/api/webhooks', { token: owner.accessToken, json: { url: hook.url, events: ['vibe.created'] } }), 201);
    expect(mine.projectId).toBeNull();
    await expectStatus(api.request('GET', `/api/webhooks/${mine.id}`, { token: stranger.accessToken }), 404);
    await expectStatus(api.request('DELETE', `/api/webhooks/${mine.id}`, { token: stranger.accessToken }), 404);
    // The account endpoint hears the events of the owner's projects.
    await createVibe(owner.accessToken, project.id, 'Heard');
    await until('the account delivery', () => hook.received.length === 1);
    await expectStatus(api.request('DELETE', `/api/webhooks/${mine.id}`, { token: owner.accessToken }), 200);
  });
});

describe('chat formats', () => {
  it('posts a readable, defused Discord message (no mention, no masked link fires), unsigned, and waits out a 429 retry_after', async () => {
    const { hook, owner, project } = await setUp();
    hook.state.answer = (n) => (n === 1 ? { status: 429, headers: { 'content-type': 'application/json' }, body: '{"retry_after": 30, "global": false}' } : { status: 204 });
    const created = await expectStatus(
      api.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['vibe.created'], format: 'discord' } }),
      201,
    );
    const hostile = '@everyone <@123456> <@&42> [free](https://evil.example) @here';
    await createVibe(owner.accessToken, project.id, hostile);
    await until('the first attempt', () => hook.received.length === 1);
    const message = JSON.parse(hook.received[0]!.body);
    expect(hook.received[0]!.headers['webhook-signature']).toBeUndefined();
    expect(message.allowed_mentions).toEqual({ parse: [] });
    expect(message.content).toContain(`${owner.user.name}: vibe.created`);
    expect(message.content).toContain(`<${server.config.appUrl}/projects/${project.id}>`);
    expect(message.content).not.toMatch(/(^|[^\u200b])@(everyone|here)/);
    expect(message.content).not.toMatch(/<@&?\d+>/);
    expect(message.content).not.toContain('[free](https://evil.example)');
    const waiting = await until('the 429 logged', async () => {
      const page = await expectStatus(api.request('GET', `/api/webhooks/${created.id}/deliveries`, { token: owner.accessToken }), 200);
      return page.deliveries[0]?.attempts.length === 1 && page.deliveries[0];
    });
    expect(Date.parse(waiting.nextAttemptAt) - Date.parse(waiting.attempts[0].at)).toBeGreaterThanOrEqual(29_000);
    server.clock.advance(31);
    await until('the second attempt', () => hook.received.length === 2);
  });

  it('escapes a Slack message so no <!everyone>, <@U…> or <url|text> survives', async () => {
    const { hook, owner, project } = await setUp();
    await expectStatus(api.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['vibe.created'], format: 'slack' } }), 201);
    await createVibe(owner.accessToken, project.id, '<!everyone> <@U123> <https://evil.example|click> & @channel');
    await until('the message', () => hook.received.length === 1);
    const { text } = JSON.parse(hook.received[0]!.body);
    expect(text).toContain('&lt;!everyone&gt; &lt;@U123&gt; &lt;https://evil.example|click&gt; &amp; @\u200bchannel');
    expect(text).toContain(`|Open in bandcollab>`);
  });
});

describe('webhook targets', () => {
  it('refuses loopback, private and link-local addresses, after DNS resolution, without WEBHOOKS_ALLOW_PRIVATE; https only without WEBHOOKS_ALLOW_HTTP', async () => {
    const strict = await startTestServer({ WEBHOOKS_ALLOW_HTTP: 'true' });
    try {
      const strictApi = client(strict.url);
      const owner = await strictApi.register();
      const project = await seedProject(strictApi, owner.accessToken);
      for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://10.1.2.3/hook', 'http://169.254.169.254/latest', 'http://[::1]/hook', 'http://[::ffff:127.0.0.1]/hook', 'http://224.0.0.1/hook']) {
        const refused = await strictApi.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url, events: ['*'] } });
        expect(refused.status, url).toBe(400);
        expect(refused.body.detail, url).toMatch(/refused/);
      }
    } finally {
      await strict.close();
    }
    const httpsOnly = await startTestServer();
    try {
      const httpsApi = client(httpsOnly.url);
      const owner = await httpsApi.register();
      const refused = await httpsApi.request('POST', '/api/webhooks', { token: owner.accessToken, json: { url: 'http://example.com/hook', events: ['*'] } });
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/https/);
    } finally {
      await httpsOnly.close();
    }
  });
});

describe('webhook deliveries to a refused address', () => {
  it('refuses loopback at delivery time, after DNS resolution, on an instance without WEBHOOKS_ALLOW_PRIVATE', async () => {
    // Added where private targets are allowed (this instance delivers nothing), delivered by a strict instance on the same database.
    const permissive = await startTestServer({ WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', JOBS_CONCURRENCY_WEBHOOK_DELIVERY: '0' });
    const strict = await startTestServer({ WEBHOOKS_ALLOW_HTTP: 'true', DATABASE_URL: permissive.config.databaseUrl! });
    const hook = await receiver();
    try {
      const permissiveApi = client(permissive.url);
      const owner = await permissiveApi.register();
      const project = await seedProject(permissiveApi, owner.accessToken);
      const url = hook.url.replace('127.0.0.1', 'localhost');
      const created = await expectStatus(permissiveApi.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url, events: ['*'] } }), 201);
      await expectStatus(permissiveApi.request('POST', `/api/webhooks/${created.id}/test`, { token: owner.accessToken }), 202);
      const attempted = await until('the refused attempt', async () => {
        const page = await expectStatus(permissiveApi.request('GET', `/api/webhooks/${created.id}/deliveries`, { token: owner.accessToken }), 200);
        return page.deliveries[0]?.attempts.length === 1 && page.deliveries[0];
      });
      expect(attempted).toMatchObject({ status: 'pending', attempts: [{ statusCode: null, error: expect.stringMatching(/not allowed|private/i) }] });
      expect(hook.received).toHaveLength(0);
    } finally {
      await hook.close();
      await strict.close();
      await permissive.close();
    }
  });
});

describe('a delivering instance killed mid-attempt', () => {
  it('is delivered by the other instance with the same webhook-id, once', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-webhooks-'));
    const allow = { WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' };
    const probe = await startTestServer({ ...allow, JOBS_CONCURRENCY_WEBHOOK_DELIVERY: '0', DATA_DIR: dataDir });
    const env = { ...allow, DATABASE_URL: probe.env.DATABASE_URL!, DATA_DIR: dataDir, JWT_SECRET: probe.env.JWT_SECRET!, ...storageSettings(probe.env) };
    const killed = await spawnServer({ ...env, WEBHOOK_TIMEOUT_SECONDS: '60' });
    let survivor: TestServer | null = null;
    const hook = await receiver();
    // The first request never gets an answer: its attempt is in flight when its instance dies.
    hook.state.answer = (n) => (n === 1 ? { status: 0 } : { status: 200, body: 'ok' });
    try {
      const probeApi = client(probe.url);
      const owner = await probeApi.register();
      const project = await seedProject(probeApi, owner.accessToken);
      const created = await expectStatus(probeApi.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['vibe.created'] } }), 201);
      await expectStatus(probeApi.request('POST', `/api/projects/${project.id}/vibes`, { token: owner.accessToken, json: { name: 'Survives' } }), 201);
      await until('the attempt in flight', () => hook.received.length === 1, 20_000);
      survivor = await startTestServer(env);
      killed.child.kill('SIGKILL');
      await killed.exited;
      await until('the attempt again', () => hook.received.length === 2, 30_000);
      expect(hook.received[1]!.headers['webhook-id']).toBe(hook.received[0]!.headers['webhook-id']);
      expect(hook.received[1]!.body).toBe(hook.received[0]!.body);
      new Webhook(created.secret).verify(hook.received[1]!.body, hook.received[1]!.headers as Record<string, string>);
      const page = await until('the delivery succeeded', async () => {
        const listed = await expectStatus(probeApi.request('GET', `/api/webhooks/${created.id}/deliveries`, { token: owner.accessToken }), 200);
        return listed.deliveries[0]?.status === 'succeeded' && listed;
      });
      expect(page.deliveries).toHaveLength(1);
      await delay(1000);
      expect(hook.received).toHaveLength(2);
    } finally {
      killed.child.kill('SIGKILL');
      await hook.close();
      await survivor?.close();
      await probe.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('secrets in the log', () => {
  it('never writes a webhook secret to the server log', async () => {
    const logged = await startLoggedServer({ WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'debug' });
    const hook = await receiver();
    try {
      const loggedApi = client(logged.url);
      const owner = await loggedApi.register();
      const project = await seedProject(loggedApi, owner.accessToken);
      const created = await expectStatus(loggedApi.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events: ['*'] } }), 201);
      const rotated = await expectStatus(loggedApi.request('POST', `/api/webhooks/${created.id}/secret`, { token: owner.accessToken }), 200);
      await loggedApi.request('POST', `/api/projects/${project.id}/vibes`, { token: owner.accessToken, json: { name: 'Logged' } });
      await until('a delivery', () => hook.received.length > 0);
      await delay(300);
      for (const secret of [created.secret, rotated.secret]) expect(logged.output()).not.toContain(secret.slice(6, 30));
    } finally {
      await hook.close();
      await logged.stop();
    }
  });
});
