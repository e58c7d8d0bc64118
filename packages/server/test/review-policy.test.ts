// The review policy (§19): Project.reviewPolicy set by an ADMIN, File.review.ready, and the review.gate_passed
// event reaching a real receiver on loopback (verified with `standardwebhooks`) once each time a version gets
// through the gate; and project.deleted reaching the project's own endpoints and its members' account ones.
import 'reflect-metadata';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, expectStatus, seedProject } from './authz/fixture.js';
import { sampleBytes, upload } from './support/files.js';
import { client } from './support/http.js';
import { until } from './support/until.js';
import { startTestServer, type TestServer } from './support/server.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

async function receiver() {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let server: TestServer;
let api: ReturnType<typeof client>;
const receivers: Awaited<ReturnType<typeof receiver>>[] = [];

beforeAll(async () => {
  // Deletes for good, so a project delete is project.deleted (with the trash on it is project.trashed).
  server = await startTestServer({ WEBHOOKS_ALLOW_HTTP: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', TRASH_RETENTION_DAYS: '0' });
  api = client(server.url);
});
afterAll(async () => {
  for (const made of receivers.splice(0)) await made.close();
  await server?.close();
});

/** A project of `owner` with a member, one uploaded file, and a project endpoint hearing `events`. */
async function setUp(events: string[]) {
  const hook = await receiver();
  receivers.push(hook);
  const owner = await api.register();
  const member = await api.register();
  const project = await seedProject(api, owner.accessToken);
  await addMember(api, owner.accessToken, project.id, member);
  const file = await expectStatus(upload(api, owner.accessToken, project.cutId, 'mix.mp3', sampleBytes('mp3'), 'Mix'), 201);
  const webhook = await expectStatus(api.request('POST', `/api/projects/${project.id}/webhooks`, { token: owner.accessToken, json: { url: hook.url, events } }), 201);
  return { hook, owner, member, project, file, webhook };
}

/** The verified bodies of type `type` the receiver has. */
const bodiesOf = (hook: { received: Received[] }, secret: string, type: string) =>
  hook.received.map((got) => new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string; data: any }).filter((body) => body.type === type);

const review = (token: string, fileId: string, state: 'approved' | 'changes_requested') =>
  expectStatus(api.request('PUT', `/api/files/${fileId}/review`, { token, json: { state } }), 200);
const fileReview = async (token: string, fileId: string) => (await expectStatus(api.request('GET', `/api/files/${fileId}`, { token }), 200)).review;

describe('review policy', () => {
  it('defaults to one approval and no open comments; an ADMIN changes it (a MEMBER may not), validated', async () => {
    const { owner, member, project, file } = await setUp(['review.*']);
    const detail = await expectStatus(api.request('GET', `/api/projects/${project.id}`, { token: member.accessToken }), 200);
    expect(detail.reviewPolicy).toEqual({ approvals: 1, noOpenComments: true });
    expect(await fileReview(owner.accessToken, file.id)).toEqual({ approved: 0, changesRequested: 0, openComments: 0, ready: false });
    await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: member.accessToken, json: { reviewPolicy: { approvals: 2 } } }), 403);
    const refused = await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { reviewPolicy: { approvals: -1 } } }), 400);
    expect(JSON.stringify(refused)).toContain('approvals');
    const updated = await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { reviewPolicy: { approvals: 2 } } }), 200);
    expect(updated.reviewPolicy).toEqual({ approvals: 2, noOpenComments: true });
    const listed = await expectStatus(api.request('GET', '/api/projects', { token: owner.accessToken }), 200);
    expect(listed.find((p: { id: string }) => p.id === project.id).reviewPolicy).toEqual({ approvals: 2, noOpenComments: true });
  });

  it('publishes review.gate_passed once per passing: two approvals, a request for changes, an open comment, a looser policy', async () => {
    const { hook, owner, member, project, file, webhook } = await setUp(['review.*']);
    await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { reviewPolicy: { approvals: 2 } } }), 200);
    const passed = () => bodiesOf(hook, webhook.secret, 'review.gate_passed');

    await review(owner.accessToken, file.id, 'approved');
    expect((await fileReview(owner.accessToken, file.id)).ready).toBe(false);
    await review(member.accessToken, file.id, 'approved');
    const [first] = await until('the gate passed', () => passed().length === 1 && passed());
    expect(first!.data).toMatchObject({
      projectId: project.id,
      actor: { id: member.user.id },
      data: { fileId: file.id, seriesId: file.series.id, cutId: project.cutId, name: 'Mix', version: 1, review: { approved: 2, changesRequested: 0, openComments: 0, ready: true }, policy: { approvals: 2, noOpenComments: true } },
    });
    expect(await fileReview(owner.accessToken, file.id)).toEqual({ approved: 2, changesRequested: 0, openComments: 0, ready: true });
    const summary = await expectStatus(api.request('GET', `/api/files/${file.id}/reviews`, { token: owner.accessToken }), 200);
    expect(summary.summary.ready).toBe(true);

    // Approving again changes nothing: no second event for the same passing.
    await review(owner.accessToken, file.id, 'approved');
    // A request for changes closes the gate; withdrawing it and approving again opens it: a second event.
    await review(member.accessToken, file.id, 'changes_requested');
    expect((await fileReview(owner.accessToken, file.id)).ready).toBe(false);
    await review(member.accessToken, file.id, 'approved');
    await until('the second passing', () => passed().length === 2);

    // An open comment closes it; resolving it opens it again, the resolver the actor.
    const comment = await expectStatus(api.request('POST', `/api/files/${file.id}/comments`, { token: member.accessToken, json: { body: 'the snare', atMs: 0 } }), 201);
    expect((await fileReview(owner.accessToken, file.id)).ready).toBe(false);
    // A reply is no open comment of its own: nothing moves.
    await expectStatus(api.request('POST', `/api/files/${file.id}/comments`, { token: owner.accessToken, json: { body: 'fixed', parentId: comment.id } }), 201);
    await expectStatus(api.request('PUT', `/api/comments/${comment.id}/resolved`, { token: owner.accessToken }), 200);
    const third = await until('the third passing', () => passed().length === 3 && passed()[2]);
    expect(third.data.actor.id).toBe(owner.user.id);

    // Reopened, a stricter policy keeps it closed without an event; a looser one (open comments allowed, one approval) reopens it.
    await expectStatus(api.request('DELETE', `/api/comments/${comment.id}/resolved`, { token: owner.accessToken }), 200);
    await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { reviewPolicy: { approvals: 3 } } }), 200);
    expect((await fileReview(owner.accessToken, file.id)).ready).toBe(false);
    await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { reviewPolicy: { approvals: 2, noOpenComments: false } } }), 200);
    const fourth = await until('the passing by policy', () => passed().length === 4 && passed()[3]);
    expect(fourth.data.data).toMatchObject({ review: { openComments: 1, ready: true }, policy: { approvals: 2, noOpenComments: false } });
    // Every event arrived once: nothing later doubles one.
    await delay(300);
    expect(passed()).toHaveLength(4);
  });

  it('passes the gate of concurrent approvals once: the second of two simultaneous reviews sees the first', async () => {
    const { hook, owner, member, project, file, webhook } = await setUp(['review.gate_passed']);
    await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { reviewPolicy: { approvals: 2 } } }), 200);
    await Promise.all([review(owner.accessToken, file.id, 'approved'), review(member.accessToken, file.id, 'approved')]);
    await until('the gate passed', () => bodiesOf(hook, webhook.secret, 'review.gate_passed').length === 1);
    await delay(300);
    expect(bodiesOf(hook, webhook.secret, 'review.gate_passed')).toHaveLength(1);
  });
  it('passes a new version as it lands under a policy of no approvals', async () => {
    const { hook, owner, project, file, webhook } = await setUp(['review.gate_passed']);
    await expectStatus(api.request('PUT', `/api/projects/${project.id}`, { token: owner.accessToken, json: { reviewPolicy: { approvals: 0 } } }), 200);
    // The policy change passes the existing version; the next one passes on upload.
    await until('the first version passed', () => bodiesOf(hook, webhook.secret, 'review.gate_passed').length === 1);
    const form = new FormData();
    form.append('versionOf', file.id);
    form.append('file', new Blob([new Uint8Array(sampleBytes('mp3', 2048))]), 'mix.mp3');
    const v2 = await expectStatus(api.request('POST', '/api/files/upload', { token: owner.accessToken, body: form }), 201);
    expect(v2.review).toEqual({ approved: 0, changesRequested: 0, openComments: 0, ready: true });
    const passed = await until('the new version passed', () => bodiesOf(hook, webhook.secret, 'review.gate_passed').length === 2 && bodiesOf(hook, webhook.secret, 'review.gate_passed'));
    expect(passed.map((body) => body.data.data.version)).toEqual([1, 2]);
  });
});

describe('project.deleted', () => {
  it("reaches the project's endpoints and its members' account endpoints; the project's endpoint then goes", async () => {
    const { hook, owner, member, project, webhook } = await setUp(['project.*']);
    const memberHook = await receiver();
    receivers.push(memberHook);
    const account = await expectStatus(api.request('POST', '/api/webhooks', { token: member.accessToken, json: { url: memberHook.url, events: ['project.deleted'] } }), 201);
    await expectStatus(api.request('DELETE', `/api/projects/${project.id}`, { token: owner.accessToken }), 200);
    const [deleted] = await until('the project endpoint heard it', () => bodiesOf(hook, webhook.secret, 'project.deleted').length === 1 && bodiesOf(hook, webhook.secret, 'project.deleted'));
    expect(deleted!.data).toMatchObject({ projectId: project.id, actor: { id: owner.user.id }, data: { projectId: project.id } });
    const [heard] = await until('the account endpoint heard it', () => bodiesOf(memberHook, account.secret, 'project.deleted').length === 1 && bodiesOf(memberHook, account.secret, 'project.deleted'));
    expect(heard!.data.data).toEqual({ projectId: project.id });
    // The project's endpoint is gone once its last delivery is done: no list shows it, its id is unknown.
    await until('the retired endpoint removed', async () => (await server.sql`select 1 from webhooks where id = ${webhook.id}`).length === 0);
    await expectStatus(api.request('GET', `/api/webhooks/${webhook.id}`, { token: owner.accessToken }), 404);
    // The member's account endpoint stays theirs.
    await expectStatus(api.request('GET', `/api/webhooks/${account.id}`, { token: member.accessToken }), 200);
  });

  it('drops at once a project endpoint that does not hear project.deleted', async () => {
    const { owner, project, webhook } = await setUp(['file.*']);
    await expectStatus(api.request('DELETE', `/api/projects/${project.id}`, { token: owner.accessToken }), 200);
    // Gone once no delivery of it is left to make (the file.uploaded of the set-up may still be on its way).
    await expect.poll(async () => (await server.sql`select 1 from webhooks where id = ${webhook.id}`).length, { timeout: 20_000 }).toBe(0);
  });
});
