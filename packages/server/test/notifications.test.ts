// Notification emails (§19) against a real SMTP server in the test process (smtp-server, parsed by mailparser):
// each kind arrives once, to the right member, with the right link and RFC 8058 headers; the actor is never
// told of their own doing; a one-click unsubscribe POST turns that kind off without signing in; hostile names
// and bodies arrive as text; the digest goes only when it holds something; review requests and preferences.
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, expectStatus, seedProject, type User } from './authz/fixture.js';
import { sampleBytes, upload, uploadForm } from './support/files.js';
import { client } from './support/http.js';
import { startLoggedServer } from './support/logged-server.js';
import { type ReceivedMail, smtpReceiver } from './support/smtp.js';
import { until } from './support/until.js';
import { startTestServer, type TestServer } from './support/server.js';

let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
let server: TestServer;
let api: ReturnType<typeof client>;
let gone: Server;
let goneUrl: string;

beforeAll(async () => {
  smtp = await smtpReceiver();
  // The digest hour is this hour, checked every second, so a digest is due while the test runs.
  server = await startTestServer({
    SMTP_URL: smtp.url,
    MAIL_FROM: 'bandcollab <band@example.com>',
    DIGEST_HOUR: String(new Date().getUTCHours()),
    DIGEST_CHECK_SECONDS: '1',
    WEBHOOKS_ALLOW_HTTP: 'true',
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    REGISTER_MAX_PER_ADDRESS: '1000',
  });
  api = client(server.url);
  // A webhook receiver that answers 410 Gone: its endpoint is disabled at the first delivery.
  gone = createServer((req, res) => req.resume().on('end', () => res.writeHead(410).end()));
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
  goneUrl = `http://127.0.0.1:${(gone.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
  await new Promise((resolve) => gone?.close(resolve));
});

/** The notification mails (not the digest) to `user` whose subject matches. */
const mailsTo = (user: User, subject: RegExp = /./) => smtp.received.filter((mail) => mail.envelopeTo.includes(user.user.email) && subject.test(mail.parsed.subject ?? ''));
/** A header as sent (mailparser folds List-* headers into its own `list` object): unfolded, from the raw message. */
const header = (mail: ReceivedMail, name: string) => {
  const head = mail.raw.slice(0, mail.raw.search(/\r?\n\r?\n/)).replace(/\r?\n[ \t]+/g, ' ');
  return new RegExp(`^${name}: *(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
};
const unsubscribeUrl = (mail: ReceivedMail) => /^<(.+)>$/.exec(header(mail, 'list-unsubscribe'))![1]!;
const preferences = async (user: User) => (await expectStatus(api.request('GET', '/api/auth/me/notifications', { token: user.accessToken }), 200)).email;

/** A project of `owner` with `others` as members. */
async function band(owner: User, others: User[], name = 'Band') {
  const project = await seedProject(api, owner.accessToken, name);
  for (const other of others) await addMember(api, owner.accessToken, project.id, other);
  return project;
}

let salt = 0;
const mix = () => {
  const bytes = sampleBytes('wav', 600);
  bytes.writeUInt32BE(++salt, 500);
  return bytes;
};

const comment = (user: User, fileId: string, json: Record<string, unknown>) =>
  expectStatus(api.request('POST', `/api/files/${fileId}/comments`, { token: user.accessToken, json }), 201);

/** Every mail of every kind is one text part, one minimal HTML part, and RFC 8058 headers with a signed link. */
function expectNotification(mail: ReceivedMail, link: string) {
  expect(mail.parsed.text).toContain(link);
  const html = String(mail.parsed.html);
  expect(html).toContain(`href="${link}"`);
  expect(html).not.toMatch(/<img|<script|src=/i);
  expect(header(mail, 'list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
  const url = unsubscribeUrl(mail);
  expect(url.startsWith(`${server.config.publicUrl}/unsubscribe/`)).toBe(true);
  expect(mail.parsed.text).toContain(url);
}

describe('preferences', () => {
  it('default to every kind on and a daily digest; PUT changes only what it names', async () => {
    const user = await api.register();
    const answer = await expectStatus(api.request('GET', '/api/auth/me/notifications', { token: user.accessToken }), 200);
    expect(answer).toEqual({ email: { mentions: true, replies: true, reviewRequests: true, newVersions: true, webhooks: true, digest: 'daily' }, emailEnabled: true });
    const changed = await expectStatus(api.request('PUT', '/api/auth/me/notifications', { token: user.accessToken, json: { email: { mentions: false, digest: 'weekly' } } }), 200);
    expect(changed.email).toEqual({ mentions: false, replies: true, reviewRequests: true, newVersions: true, webhooks: true, digest: 'weekly' });
    expect(await preferences(user)).toEqual(changed.email);
    const wrong = await api.request('PUT', '/api/auth/me/notifications', { token: user.accessToken, json: { email: { digest: 'hourly' } } });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(wrong.body)).toContain('digest');
    expect((await api.request('GET', '/api/auth/me/notifications')).status).toBe(401);
  });
});

describe('mentions and replies', () => {
  it('mail a mention and a reply at once, once each, to the right member, never to the actor; hostile text stays text', async () => {
    const ana = await api.register({ name: 'Ana <script>alert(1)</script>' });
    const ben = await api.register({ name: 'Ben' });
    const cy = await api.register({ name: 'Cy' });
    const project = await band(ana, [ben, cy], 'Night <b>Drive</b>');
    const file = await expectStatus(upload(api, ana.accessToken, project.cutId, 'mix.wav', mix(), 'Mix "<i>1</i>"'), 201);
    const body = 'Listen at <a href="https://evil.example">here</a>\n& tell me';
    // Ana mentions Ben and herself: Ben is told, Ana (the actor) is not.
    const top = await comment(ana, file.id, { body, atMs: 83_000, mentions: [ben.user.id, ana.user.id] });
    const [mention] = await until('the mention mail', () => mailsTo(ben, /mentioned you/).length > 0 && mailsTo(ben, /mentioned you/));
    expect(mention!.parsed.subject).toBe('Ana <script>alert(1)</script> mentioned you on Mix "<i>1</i>"');
    expect(mention!.parsed.text).toContain('> Listen at <a href="https://evil.example">here</a>\n> & tell me');
    expect(mention!.parsed.text).toContain('at 1:23');
    const html = String(mention!.parsed.html);
    expect(html).not.toContain('<a href="https://evil.example"');
    expect(html).toContain('&#60;a href=&#34;https://evil.example&#34;&#62;');
    expect(html).not.toContain('<b>Drive');
    expectNotification(mention!, `${server.config.publicUrl}/api/comments/${top.id}`);

    // Cy replies to Ana's comment: Ana is told; a reply that mentions Ana tells her once, as a mention.
    const reply = await comment(cy, file.id, { body: 'Agreed', parentId: top.id });
    const [replied] = await until('the reply mail', () => mailsTo(ana, /replied to your comment/).length > 0 && mailsTo(ana, /replied to your comment/));
    expect(replied!.parsed.subject).toBe('Cy replied to your comment on Mix "<i>1</i>"');
    expectNotification(replied!, `${server.config.publicUrl}/api/comments/${reply.id}`);
    await comment(ben, file.id, { body: 'me too @Ana', parentId: top.id, mentions: [ana.user.id] });
    await until('the mention of Ana', () => mailsTo(ana, /Ben mentioned you/).length === 1);

    // Ana replying in her own thread tells nobody of a reply (the thread is hers).
    await comment(ana, file.id, { body: 'Thanks all', parentId: top.id });
    await delay(700);
    expect(mailsTo(ana, /replied to your comment/)).toHaveLength(1);
    expect(mailsTo(ana, /mentioned you/)).toHaveLength(1);
    expect(mailsTo(ben, /mentioned you/)).toHaveLength(1);
    expect(mailsTo(cy, /mentioned you|replied/)).toHaveLength(0);
  });

  it("tells a member of a guest's reply under the guest's name, not the link creator's", async () => {
    const ana = await api.register({ name: 'Ana' });
    const ben = await api.register({ name: 'Ben' });
    const project = await band(ana, [ben]);
    const file = await expectStatus(upload(api, ana.accessToken, project.cutId, 'mix.wav', mix(), 'Demo'), 201);
    const top = await comment(ben, file.id, { body: 'what do you think?' });
    const link = await expectStatus(api.request('POST', `/api/files/${file.id}/share`, { token: ana.accessToken, json: { allowComments: true } }), 201);
    await expectStatus(api.request('POST', `/api/share/${link.token}/comments`, { json: { name: 'Producer <b>X</b>', body: 'love it', parentId: top.id } }), 201);
    const [mail] = await until('the reply mail', () => mailsTo(ben, /replied to your comment/).length > 0 && mailsTo(ben, /replied to your comment/));
    expect(mail!.parsed.subject).toBe('Producer <b>X</b> (guest) replied to your comment on Demo');
    expect(String(mail!.parsed.html)).not.toContain('<b>X');
  });

  it('a one-click unsubscribe POST turns that kind off without signing in; the GET only asks', async () => {
    const ana = await api.register();
    const ben = await api.register();
    const project = await band(ana, [ben]);
    const file = await expectStatus(upload(api, ana.accessToken, project.cutId, 'mix.wav', mix()), 201);
    await comment(ana, file.id, { body: 'first', mentions: [ben.user.id] });
    const [mail] = await until('the mention', () => mailsTo(ben, /mentioned you/).length > 0 && mailsTo(ben, /mentioned you/));
    const url = unsubscribeUrl(mail!);
    expect(Buffer.from(url.slice(url.lastIndexOf('/') + 1), 'base64url').length).toBe(49);

    // A GET (a mail scanner following the link) changes nothing.
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post"');
    expect((await preferences(ben)).mentions).toBe(true);

    // The mail client's one-click POST (RFC 8058), without any credential.
    const posted = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(posted.status).toBe(200);
    expect(await posted.text()).toContain('You no longer get');
    expect(await preferences(ben)).toMatchObject({ mentions: false, replies: true, reviewRequests: true, newVersions: true, digest: 'daily' });

    await comment(ana, file.id, { body: 'second', mentions: [ben.user.id] });
    await delay(800);
    expect(mailsTo(ben, /mentioned you/)).toHaveLength(1);

    // A link altered by one character is not one the server signed.
    const forged = url.slice(0, -2) + (url.endsWith('AA') ? 'BB' : 'AA');
    expect((await fetch(forged, { method: 'POST', body: 'List-Unsubscribe=One-Click' })).status).toBe(400);
  });
});

describe('review requests', () => {
  it('records File.reviewRequests, publishes review.requested, mails each member asked once; a review ends the request', async () => {
    const ana = await api.register({ name: 'Ana' });
    const ben = await api.register({ name: 'Ben' });
    const cy = await api.register({ name: 'Cy' });
    const stranger = await api.register();
    const project = await band(ana, [ben, cy], 'Demo');
    const file = await expectStatus(upload(api, ana.accessToken, project.cutId, 'mix.wav', mix(), 'Single'), 201);
    expect(file.reviewRequests).toEqual([]);

    const refused = await api.request('POST', `/api/files/${file.id}/review-requests`, { token: ana.accessToken, json: { userIds: [stranger.user.id] } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('userIds');
    expect((await api.request('POST', `/api/files/${file.id}/review-requests`, { token: stranger.accessToken, json: { userIds: [ben.user.id] } })).status).toBe(404);

    const answer = await expectStatus(api.request('POST', `/api/files/${file.id}/review-requests`, { token: ana.accessToken, json: { userIds: [ben.user.id, cy.user.id] } }), 201);
    expect(answer.emailed).toBe(true);
    expect(answer.reviewRequests.map((request: { userId: string }) => request.userId).sort()).toEqual([ben.user.id, cy.user.id].sort());
    expect(answer.reviewRequests[0].requestedBy).toEqual({ id: ana.user.id, name: 'Ana' });
    const record = await expectStatus(api.request('GET', `/api/files/${file.id}`, { token: ben.accessToken }), 200);
    expect(record.reviewRequests).toHaveLength(2);

    for (const member of [ben, cy]) {
      const [mail] = await until('the review request mail', () => mailsTo(member, /asks you to review/).length > 0 && mailsTo(member, /asks you to review/));
      expect(mail!.parsed.subject).toBe('Ana asks you to review Single (v1) in Demo');
      expectNotification(mail!, `${server.config.publicUrl}/api/files/${file.id}`);
    }
    expect(mailsTo(ana, /asks you to review/)).toHaveLength(0);

    await expectStatus(api.request('PUT', `/api/files/${file.id}/review`, { token: ben.accessToken, json: { state: 'approved' } }), 200);
    const after = await expectStatus(api.request('GET', `/api/files/${file.id}`, { token: ana.accessToken }), 200);
    expect(after.reviewRequests.map((request: { userId: string }) => request.userId)).toEqual([cy.user.id]);
    await delay(500);
    expect(mailsTo(ben, /asks you to review/)).toHaveLength(1);
  });
});

describe('new versions', () => {
  it('tell the members who commented on or reviewed an earlier version, not the uploader', async () => {
    const ana = await api.register();
    const ben = await api.register();
    const cy = await api.register();
    const dee = await api.register();
    const project = await band(ana, [ben, cy, dee]);
    const v1 = await expectStatus(upload(api, ana.accessToken, project.cutId, 'mix.wav', mix(), 'Take'), 201);
    await comment(ben, v1.id, { body: 'drums too loud' });
    await expectStatus(api.request('PUT', `/api/files/${v1.id}/review`, { token: cy.accessToken, json: { state: 'changes_requested' } }), 200);
    await comment(ana, v1.id, { body: 'noted' });
    const v2 = await expectStatus(uploadForm(api, ana.accessToken, [{ name: 'versionOf', value: v1.id }, { name: 'file', value: mix(), fileName: 'mix.wav' }]), 201);
    for (const member of [ben, cy]) {
      const [mail] = await until('the new version mail', () => mailsTo(member, /New version of/).length > 0 && mailsTo(member, /New version of/));
      expect(mail!.parsed.subject).toMatch(/^New version of Take: v2 in /);
      expectNotification(mail!, `${server.config.publicUrl}/api/files/${v2.id}`);
    }
    await delay(500);
    expect(mailsTo(ana, /New version of/)).toHaveLength(0);
    expect(mailsTo(dee, /New version of/)).toHaveLength(0);
    expect(mailsTo(ben, /New version of/)).toHaveLength(1);
  });
});

describe('webhooks', () => {
  it('tells the owner once when their endpoint is disabled', async () => {
    const ana = await api.register();
    const project = await seedProject(api, ana.accessToken);
    const hook = await expectStatus(api.request('POST', '/api/webhooks', { token: ana.accessToken, json: { url: goneUrl, events: ['*'], description: 'CI <bot>' } }), 201);
    await expectStatus(api.request('POST', `/api/vibes/${project.vibeId}/cuts`, { token: ana.accessToken, json: { name: 'Another' } }), 201);
    const [mail] = await until('the disabled webhook mail', () => mailsTo(ana, /webhook endpoint/).length > 0 && mailsTo(ana, /webhook endpoint/));
    expect(mail!.parsed.subject).toBe('Your bandcollab webhook endpoint CI <bot> was disabled');
    expect(mail!.parsed.text).toContain('410 Gone');
    expect(mail!.parsed.text).not.toContain('/hook');
    expectNotification(mail!, `${server.config.publicUrl}/api/webhooks/${hook.id}/deliveries`);
    await delay(500);
    expect(mailsTo(ana, /webhook endpoint/)).toHaveLength(1);
  });
});

describe('digest', () => {
  it("goes to a member with others' activity not mailed at once, once; not to one whose projects were quiet", async () => {
    const ana = await api.register({ name: 'Ana' });
    const ben = await api.register({ name: 'Ben' });
    const quiet = await api.register({ name: 'Quiet' });
    await seedProject(api, quiet.accessToken, 'Quiet project');
    const project = await band(ana, [ben], 'Digest <b>band</b>');
    await expectStatus(upload(api, ana.accessToken, project.cutId, 'mix.wav', mix()), 201);
    const [digest] = await until('the digest', () => mailsTo(ben, /What happened/).length > 0 && mailsTo(ben, /What happened/), 15_000);
    expect(digest!.parsed.text).toContain('"Digest <b>band</b>": ');
    expect(digest!.parsed.text).toContain('1 file or version uploaded');
    expect(digest!.parsed.text).toContain('by Ana');
    expect(String(digest!.parsed.html)).not.toContain('<b>band');
    expectNotification(digest!, `${server.config.publicUrl}/api/projects`);
    expect(unsubscribeUrl(digest!)).not.toBe('');
    // Claimed once for the period, whatever runs follow.
    await delay(2500);
    expect(mailsTo(ben, /What happened/)).toHaveLength(1);
    // Quiet's only activity is their own.
    expect(mailsTo(quiet, /What happened/)).toHaveLength(0);
    const posted = await fetch(unsubscribeUrl(digest!), { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    expect(posted.status).toBe(200);
    expect((await preferences(ben)).digest).toBe('off');
  });
});

describe('a refusing SMTP server', () => {
  it('fails no request: the comment is made and the mail comes on a retry', async () => {
    const ana = await api.register();
    const ben = await api.register();
    const project = await band(ana, [ben]);
    const file = await expectStatus(upload(api, ana.accessToken, project.cutId, 'mix.wav', mix()), 201);
    smtp.state.refuse = 1;
    const refusedBefore = smtp.state.refused;
    await comment(ana, file.id, { body: 'hello', mentions: [ben.user.id] });
    await until('the refused attempt', () => smtp.state.refused > refusedBefore);
    server.clock.advance(15);
    await until('the retried mention', () => mailsTo(ben, /mentioned you/).length === 1, 15_000);
  });
});

describe('email off', () => {
  it('keeps preferences and review requests working, and says that nothing is mailed', async () => {
    const off = await startTestServer();
    try {
      const offApi = client(off.url);
      const ana = await offApi.register();
      const ben = await offApi.register();
      const project = await seedProject(offApi, ana.accessToken);
      await addMember(offApi, ana.accessToken, project.id, ben);
      const changed = await expectStatus(offApi.request('PUT', '/api/auth/me/notifications', { token: ben.accessToken, json: { email: { replies: false } } }), 200);
      expect(changed).toMatchObject({ email: { replies: false }, emailEnabled: false });
      const file = await expectStatus(upload(offApi, ana.accessToken, project.cutId, 'mix.wav', mix()), 201);
      const asked = await expectStatus(offApi.request('POST', `/api/files/${file.id}/review-requests`, { token: ana.accessToken, json: { userIds: [ben.user.id] } }), 201);
      expect(asked.emailed).toBe(false);
      expect(asked.reviewRequests.map((request: { userId: string }) => request.userId)).toEqual([ben.user.id]);
      expect(await off.sql`select 1 from emails`).toHaveLength(0);
    } finally {
      await off.close();
    }
  });
});

describe('unsubscribe links in the log', () => {
  it('are redacted like share tokens', async () => {
    const logged = await startLoggedServer({ SMTP_URL: smtp.url, MAIL_FROM: 'band@example.com' });
    try {
      const loggedApi = client(logged.url);
      const ana = await loggedApi.register();
      const ben = await loggedApi.register();
      const project = await seedProject(loggedApi, ana.accessToken);
      await addMember(loggedApi, ana.accessToken, project.id, ben);
      const file = await expectStatus(upload(loggedApi, ana.accessToken, project.cutId, 'mix.wav', mix()), 201);
      await expectStatus(loggedApi.request('POST', `/api/files/${file.id}/comments`, { token: ana.accessToken, json: { body: 'hey', mentions: [ben.user.id] } }), 201);
      const [mail] = await until('the mention', () => mailsTo(ben, /mentioned you/).length > 0 && mailsTo(ben, /mentioned you/));
      const url = unsubscribeUrl(mail!);
      const token = url.slice(url.lastIndexOf('/') + 1);
      const local = `${logged.url}/unsubscribe/${token}`;
      expect((await fetch(local)).status).toBe(200);
      expect((await fetch(local, { method: 'POST', body: 'List-Unsubscribe=One-Click' })).status).toBe(200);
      await until('the request lines', () => logged.output().includes('/unsubscribe/[redacted]'));
      expect(logged.output()).not.toContain(token);
    } finally {
      await logged.stop();
    }
  });
});
