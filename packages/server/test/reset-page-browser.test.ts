// The password reset link followed end to end in a real browser (Debian's chromium, playwright-core): the
// mail from a real SMTP server in the test process, its link opened, the form filled in and sent.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { client } from './support/http.js';
import { requirePrerequisite } from './support/prerequisites.js';
import { startTestServer, type TestServer } from './support/server.js';
import { smtpReceiver } from './support/smtp.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const hasChromium = requirePrerequisite('chromium', existsSync(CHROMIUM) ? null : `${CHROMIUM} is not installed (apt-get install chromium)`);

let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
let server: TestServer;
let profileDir: string;
let browser: BrowserContext;

beforeAll(async () => {
  if (!hasChromium) return;
  smtp = await smtpReceiver();
  server = await startTestServer({ SMTP_URL: smtp.url, MAIL_FROM: 'band@example.com' });
  profileDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-chromium-'));
  browser = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (profileDir) await rm(profileDir, { recursive: true, force: true });
  await server?.close();
  await smtp?.close();
});

it.runIf(hasChromium)('resets the password from the emailed link in Chromium; the link then no longer works', async () => {
  const api = client(server.url);
  const user = await api.register();
  expect((await api.request('POST', '/api/auth/password/forgot', { json: { email: user.user.email } })).status).toBe(202);
  let text = '';
  for (let waited = 0; !text && waited < 10_000; waited += 50) {
    text = smtp.received.find((mail) => mail.envelopeTo.includes(user.user.email))?.parsed.text ?? '';
    if (!text) await delay(50);
  }
  const link = /(http\S+\/reset\/[\w-]+)/.exec(text)![1]!;

  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
  await page.goto(link);
  expect(await page.title()).toBe('Choose a new password · bandcollab');
  // Two different passwords: the page says so and keeps the form.
  await page.fill('input[name="newPassword"]', 'a brand new passphrase');
  await page.fill('input[name="confirm"]', 'another passphrase');
  await page.click('button[type="submit"]');
  await expect.poll(() => page.textContent('[role="alert"]')).toContain('differ');
  await page.fill('input[name="newPassword"]', 'a brand new passphrase');
  await page.fill('input[name="confirm"]', 'a brand new passphrase');
  await page.click('button[type="submit"]');
  await expect.poll(() => page.textContent('h1')).toBe('Password changed');
  // Nothing but the refused first try (its 400) went wrong: no blocked resource, no policy violation.
  expect(errors.filter((error) => !/status of 400/.test(error))).toEqual([]);

  expect((await api.request('GET', '/api/auth/me', { token: user.accessToken })).status).toBe(401);
  expect((await api.request('POST', '/api/auth/login', { json: { email: user.user.email, password: 'a brand new passphrase' } })).status).toBe(200);
  // Used: the same link, opened again and sent, says it does not work.
  await page.goto(link);
  await page.fill('input[name="newPassword"]', 'yet another passphrase');
  await page.fill('input[name="confirm"]', 'yet another passphrase');
  await page.click('button[type="submit"]');
  await expect.poll(() => page.textContent('h1')).toBe('This reset link does not work');
  await page.close();
}, 60_000);
