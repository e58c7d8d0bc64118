// Email (§19) against a real SMTP server in the test process (smtp-server, parsed with mailparser): each mail
// arrives once, to the right person, with the right link; names from users arrive as text; an SMTP server
// that refuses fails no request and the mail is retried with the same Message-ID; no link reaches the log.
import 'reflect-metadata';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, seedProject } from './authz/fixture.js';
import { client } from './support/http.js';
import { startLoggedServer } from './support/logged-server.js';
import { smtpReceiver } from './support/smtp.js';
import { startTestServer, type TestServer } from './support/server.js';

async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await delay(50);
  }
}

let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  smtp = await smtpReceiver();
  server = await startTestServer({ SMTP_URL: smtp.url, MAIL_FROM: 'bandcollab <band@example.com>' });
  api = client(server.url);
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

const mailsTo = (address: string) => smtp.received.filter((mail) => mail.envelopeTo.includes(address));

describe('invitation emails', () => {
  it('emails the invitee the link the answer carries, once, names from users as text', async () => {
    const owner = await api.register({ name: 'Ana <script>alert(1)</script> & "co"' });
    const project = await seedProject(api, owner.accessToken, 'Night <b>Drive</b>');
    const email = `invitee-${Date.now()}@example.com`;
    const answer = await expectStatus(api.request('POST', `/api/projects/${project.id}/invite`, { token: owner.accessToken, json: { email, role: 'MEMBER' } }), 201);
    expect(answer.emailed).toBe(true);
    const [mail] = await until('the invitation mail', () => mailsTo(email).length > 0 && mailsTo(email));
    const { parsed } = mail!;
    expect(parsed.from?.value[0]).toMatchObject({ name: 'bandcollab', address: 'band@example.com' });
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.text : null).toBe(email);
    expect(parsed.subject).toBe('Ana <script>alert(1)</script> & "co" invites you to Night <b>Drive</b> on bandcollab');
    expect(parsed.messageId).toMatch(/^<[0-9a-f-]{36}@127\.0\.0\.1>$|^<[0-9a-f-]{36}@localhost>$/);
    // Plain text holds the names as they are and the link exactly; the HTML part holds them escaped.
    expect(parsed.text).toContain(`${answer.inviteUrl}\n`);
    expect(parsed.text).toContain('Night <b>Drive</b>');
    const html = String(parsed.html);
    expect(html).toContain(`href="${answer.inviteUrl}"`);
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>Drive');
    expect(html).toContain('Ana &#60;script&#62;alert(1)&#60;/script&#62; &#38; &#34;co&#34;');
    expect(html).not.toMatch(/<img|<script|src=/i);
    expect(answer.inviteUrl.startsWith(server.config.publicUrl)).toBe(true);
    // Once: nothing later sends it again.
    await delay(500);
    expect(mailsTo(email)).toHaveLength(1);
  });

  it('fails no request when the SMTP server refuses: the mail is retried with the same Message-ID and arrives once', async () => {
    const owner = await api.register();
    const project = await seedProject(api, owner.accessToken);
    const email = `retried-${Date.now()}@example.com`;
    smtp.state.refuse = 1;
    const answer = await expectStatus(api.request('POST', `/api/projects/${project.id}/invite`, { token: owner.accessToken, json: { email, role: 'ADMIN' } }), 201);
    expect(answer.emailed).toBe(true);
    await until('the refused attempt', () => smtp.state.refused === 1);
    const [queued] = await until('the job waiting for its retry', async () => {
      const rows = await server.sql<{ state: string; attempts: number }[]>`
        select j.state, j.attempts from jobs j join emails e on e.id = (j.payload->>'messageId')::uuid where e.to_address = ${email}`;
      return rows[0]?.state === 'queued' && rows[0].attempts === 1 && rows;
    });
    expect(queued).toBeDefined();
    expect(mailsTo(email)).toHaveLength(0);
    // The retry comes due on the server's clock (the email kind's first wait is at most 10 s).
    server.clock.advance(15);
    const [mail] = await until('the retried mail', () => mailsTo(email).length > 0 && mailsTo(email), 15_000);
    const [row] = await server.sql<{ id: string; sentAt: Date | null; content: Buffer | null }[]>`select id, sent_at, content from emails where to_address = ${email}`;
    expect(mail!.parsed.messageId).toBe(`<${row!.id}@${new URL(server.config.publicUrl).hostname}>`);
    // Sent: the content, and the link in it, is no longer stored.
    expect(row!.sentAt).not.toBeNull();
    expect(row!.content).toBeNull();
    await delay(300);
    expect(mailsTo(email)).toHaveLength(1);
  });

  it('stores what it is about to send sealed: the link is not in the database', async () => {
    const owner = await api.register();
    const project = await seedProject(api, owner.accessToken);
    const email = `sealed-${Date.now()}@example.com`;
    smtp.state.refuse = 1;
    const answer = await expectStatus(api.request('POST', `/api/projects/${project.id}/invite`, { token: owner.accessToken, json: { email, role: 'MEMBER' } }), 201);
    await until('the refused attempt', () => smtp.state.refused >= 2);
    const [row] = await server.sql<{ content: Buffer }[]>`select content from emails where to_address = ${email}`;
    const token = answer.inviteUrl.slice(answer.inviteUrl.lastIndexOf('/') + 1);
    expect(row!.content.toString('latin1')).not.toContain(token);
    expect(row!.content.toString('latin1')).not.toContain('invites you');
    server.clock.advance(15);
    await until('the retried mail', () => mailsTo(email).length === 1, 15_000);
  });
});

describe('email in the log', () => {
  it('logs that a mail went, never its link, address or the SMTP URL', async () => {
    const logged = await startLoggedServer({ SMTP_URL: smtp.url.replace('smtp://', 'smtp://user:hunter2secret@'), MAIL_FROM: 'band@example.com' });
    try {
      const loggedApi = client(logged.url);
      const owner = await loggedApi.register();
      const project = await seedProject(loggedApi, owner.accessToken);
      const email = `logged-${Date.now()}@example.com`;
      const answer = await expectStatus(loggedApi.request('POST', `/api/projects/${project.id}/invite`, { token: owner.accessToken, json: { email, role: 'MEMBER' } }), 201);
      await until('the mail', () => mailsTo(email).length === 1);
      await until('the sent line', () => logged.output().includes('email sent'));
      const token = answer.inviteUrl.slice(answer.inviteUrl.lastIndexOf('/') + 1);
      expect(logged.output()).not.toContain(token);
      expect(logged.output()).not.toContain(email);
      expect(logged.output()).not.toContain('hunter2secret');
    } finally {
      await logged.stop();
    }
  });
});
