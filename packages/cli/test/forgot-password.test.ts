// band auth forgot-password against a real server with email on (a real SMTP server in the test process)
// and one with email off: the same answer for a known and an unknown email, and a plain "email is off".
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { smtpReceiver } from '../../server/test/support/smtp.js';
import { type CliUser, cliUser, registerWithCli } from './support/cli.js';

let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
let server: TestServer;
let off: TestServer;
let ana: CliUser;

beforeAll(async () => {
  smtp = await smtpReceiver();
  server = await startTestServer({ SMTP_URL: smtp.url, MAIL_FROM: 'band@example.com' });
  off = await startTestServer();
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com', 'correct horse battery', 'Ana');
});
afterAll(async () => {
  await ana?.cleanup();
  await server?.close();
  await off?.close();
  await smtp?.close();
});

it('mails the link to a known email and answers an unknown one alike', async () => {
  const known = await ana.band(['auth', 'forgot-password', 'ana@example.com']);
  const unknown = await ana.band(['auth', 'forgot-password', 'nobody@example.com']);
  expect(known.exitCode).toBe(0);
  expect(unknown.exitCode).toBe(0);
  expect(known.stdout.replace('ana@', 'X@')).toBe(unknown.stdout.replace('nobody@', 'X@'));
  expect(known.stdout).toContain('If ana@example.com has an account');
  for (let waited = 0; smtp.received.length === 0 && waited < 10_000; waited += 50) await delay(50);
  await delay(300);
  expect(smtp.received.map((mail) => mail.envelopeTo)).toEqual([['ana@example.com']]);
  expect(smtp.received[0]!.parsed.text).toMatch(/\/reset\/[\w-]{43}/);
});

it('says that email is off on a server without it, and fails', async () => {
  const elsewhere = await cliUser(off.url);
  try {
    const result = await elsewhere.band(['auth', 'forgot-password', 'ana@example.com']);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(/email is off/i);
  } finally {
    await elsewhere.cleanup();
  }
});
