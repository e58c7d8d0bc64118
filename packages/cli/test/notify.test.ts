// band notify show|set and band review request against a real server with email on (a real SMTP server in the
// test process): the preferences as the server keeps them, usage errors for wrong values, and a review
// request resolved from a member's email that mails that member.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { smtpReceiver } from '../../server/test/support/smtp.js';
import { client } from '../../server/test/support/http.js';
import { addMember } from '../../server/test/authz/fixture.js';
import { type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
let server: TestServer;
let ana: CliUser;

beforeAll(async () => {
  smtp = await smtpReceiver();
  server = await startTestServer({ SMTP_URL: smtp.url, MAIL_FROM: 'band@example.com' });
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com', 'correct horse battery', 'Ana');
});
afterAll(async () => {
  await ana?.cleanup();
  await server?.close();
  await smtp?.close();
});

it('shows the defaults, sets kinds and the digest, and refuses a value that is not on, off or a frequency', async () => {
  const shown = await ana.band(['notify', 'show']);
  expect(shown.exitCode, shown.stderr).toBe(0);
  expect(shown.stdout).toMatch(/^mentions +on$/m);
  expect(shown.stdout).toMatch(/^digest +daily$/m);

  const set = await ana.band(['notify', 'set', '--mentions', 'off', '--digest', 'weekly', '--json']);
  expect(set.exitCode, set.stderr).toBe(0);
  expect(JSON.parse(set.stdout)).toEqual({
    email: { mentions: false, replies: true, reviewRequests: true, newVersions: true, webhooks: true, digest: 'weekly' },
    emailEnabled: true,
  });
  expect((await ana.band(['notify', 'show'])).stdout).toMatch(/^mentions +off$/m);

  const wrong = await ana.band(['notify', 'set', '--replies', 'maybe']);
  expect(wrong.exitCode).toBe(2);
  expect(wrong.stderr).toContain('--replies takes on or off');
  const nothing = await ana.band(['notify', 'set']);
  expect(nothing.exitCode).toBe(2);
  expect(nothing.stderr).toContain('say what changes');
});

it('asks a member by email to review a file, who is mailed once', async () => {
  const api = client(server.url);
  const ben = await api.register({ email: 'ben@example.com', name: 'Ben' });
  const anaApi = await api.request('POST', '/api/auth/login', { json: { email: 'ana@example.com', password: 'correct horse battery' } });
  expect((await ana.band(['project', 'create', 'Album'])).exitCode).toBe(0);
  await ana.band(['vibe', 'create', 'Single', '--project', 'Album']);
  await ana.band(['cut', 'create', 'Mix', '--vibe', 'Single', '--project', 'Album']);
  const projects = await api.request('GET', '/api/projects', { token: anaApi.body.accessToken });
  await addMember(api, anaApi.body.accessToken, projects.body[0].id, ben);
  const { writeFile, mkdtemp } = await import('node:fs/promises');
  const dir = await mkdtemp(`${ana.home}/work-`);
  await writeFile(`${dir}/mix.wav`, wavBytes(1, 8000));
  const where = ['--cut', 'Mix', '--vibe', 'Single', '--project', 'Album'];
  expect((await ana.band(['file', 'upload', `${dir}/mix.wav`, ...where])).exitCode).toBe(0);

  const asked = await ana.band(['review', 'request', 'mix', ...where, '--user', 'ben@example.com']);
  expect(asked.exitCode, asked.stderr).toBe(0);
  expect(asked.stdout).toBe('Asked Ben to review mix.wav: emailed\n');
  // Ben also has the mail of his invitation to the project.
  const toBen = () => smtp.received.filter((mail) => mail.envelopeTo.includes('ben@example.com') && /review/.test(mail.parsed.subject ?? ''));
  for (let waited = 0; toBen().length === 0 && waited < 10_000; waited += 50) await delay(50);
  await delay(300);
  expect(toBen().map((mail) => mail.parsed.subject)).toEqual(['Ana asks you to review mix.wav (v1) in Album']);

  const stranger = await ana.band(['review', 'request', 'mix', ...where, '--user', 'nobody@example.com']);
  expect(stranger.exitCode).not.toBe(0);
});
