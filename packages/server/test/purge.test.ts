import { randomBytes } from 'node:crypto';
import { readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { expectStatus } from './authz/fixture.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';
import { until } from './support/until.js';

// Expired rows of every kind are deleted at start and then every PURGE_INTERVAL_SECONDS.

const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function serverWith(env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer(env);
  servers.push(server);
  return server;
}

/** One expired and one live row of each kind; answers a function that counts each kind as it stands. */
async function seedExpiredAndLive(server: TestServer) {
  const api = client(server.url);
  const owner = await userWithCut(api);
  const userId = owner.user.user.id;
  const tag = randomBytes(4).toString('hex');

  const [expiredSession] = await server.sql`
    insert into sessions (user_id, remember_me, expires_at) values (${userId}, false, now() - interval '1 minute') returning id`;
  await server.sql`insert into refresh_tokens (token_hash, session_id) values (${`expired-${tag}`}, ${expiredSession!.id})`;

  await server.sql`insert into login_failures (email, client_ip, failed_at) values
    (${`old-${tag}@example.com`}, '192.0.2.1', now() - interval '16 minutes'),
    (${`new-${tag}@example.com`}, '192.0.2.1', now())`;
  await server.sql`insert into login_successes (email, client_ip, succeeded_at) values
    (${`old-${tag}@example.com`}, '192.0.2.1', now() - interval '16 minutes'),
    (${`new-${tag}@example.com`}, '192.0.2.1', now())`;
  await server.sql`insert into registration_attempts (client_ip, attempted_at) values
    (${`old-${tag}`}, now() - interval '61 minutes'), (${`new-${tag}`}, now())`;

  await server.sql`insert into cli_login_codes (code_hash, user_id, redirect_uri, code_challenge, expires_at) values
    (${`old-${tag}`}, ${userId}, 'http://127.0.0.1:1/callback', 'challenge', now() - interval '1 minute'),
    (${`new-${tag}`}, ${userId}, 'http://127.0.0.1:1/callback', 'challenge', now() + interval '1 minute')`;

  for (const who of ['old', 'new']) {
    await expectStatus(
      api.request('POST', `/api/projects/${owner.projectId}/invite`, { token: owner.token, json: { email: `${who}-${tag}@example.com`, role: 'MEMBER' } }),
      201,
    );
  }
  await server.sql`update invitations set expires_at = now() - interval '1 minute' where email = ${`old-${tag}@example.com`}`;

  const file = await expectStatus(upload(api, owner.token, owner.cutId, 'take.wav', sampleBytes('wav')), 201);
  const share = (json: object) => expectStatus(api.request('POST', `/api/files/${file.id}/share`, { token: owner.token, json }), 201);
  await share({ expiresIn: 3600 });
  await share({ expiresIn: 3600 });
  await share({});
  await server.sql`update share_links set expires_at = now() - interval '1 minute'
    where token_hash = (select token_hash from share_links where file_id = ${file.id} and expires_at is not null limit 1)`;

  // Expired 31 days ago (deleted), expired a day ago (kept for 30 days), live.
  await server.sql`insert into personal_access_tokens (user_id, name, token_hash, token_hint, scope, expires_at) values
    (${userId}, 'long expired', ${`old-${tag}`}, 'bcp_old', 'read', now() - interval '31 days'),
    (${userId}, 'just expired', ${`recent-${tag}`}, 'bcp_rec', 'read', now() - interval '1 day'),
    (${userId}, 'live', ${`new-${tag}`}, 'bcp_new', 'read', now() + interval '1 day')`;

  return async () => {
    const [counts] = await server.sql`select
      (select count(*)::int from sessions where user_id = ${userId}) as sessions,
      (select count(*)::int from refresh_tokens where token_hash = ${`expired-${tag}`}) as "expiredRefreshTokens",
      (select count(*)::int from login_failures where email like ${`%-${tag}@example.com`}) as "loginFailures",
      (select count(*)::int from login_successes where email like ${`%-${tag}@example.com`}) as "loginSuccesses",
      (select count(*)::int from registration_attempts where client_ip like ${`%-${tag}`}) as "registrationAttempts",
      (select count(*)::int from cli_login_codes where code_hash like ${`%-${tag}`}) as "cliLoginCodes",
      (select count(*)::int from invitations where email like ${`%-${tag}@example.com`}) as invitations,
      (select count(*)::int from share_links where file_id = ${file.id}) as "shareLinks",
      (select count(*)::int from personal_access_tokens where token_hash like ${`%-${tag}`}) as "personalAccessTokens"`;
    return counts!;
  };
}


// The live ones stay: the owner's session from registering, the recent failure, success and registration, the unexpired
// code and invitation, the unexpired and the never-expiring share link, the live personal access token and the
// one that expired less than 30 days ago.
const AFTER_PURGE = {
  sessions: 1,
  expiredRefreshTokens: 0,
  loginFailures: 1,
  loginSuccesses: 1,
  registrationAttempts: 1,
  cliLoginCodes: 1,
  invitations: 1,
  shareLinks: 2,
  personalAccessTokens: 2,
};

it('deletes expired sessions with their refresh tokens, old failure, success and registration records, codes, invitations, links and tokens expired over 30 days ago, periodically', async () => {
  const server = await serverWith({ PURGE_INTERVAL_SECONDS: '1' });
  // Seeding can take longer than the interval on a busy machine, so the rows are not counted before the
  // purge. The counts below can only be reached by a purge that ran after seeding (the one at start ran
  // before any of these rows existed); a row the seeding failed to make expired would stay and keep them off.
  const counts = await seedExpiredAndLive(server);
  await until('the periodic purge', async () => JSON.stringify(await counts()) === JSON.stringify(AFTER_PURGE));
});

it('purges at start', async () => {
  // The first server purged at its own start, before the rows existed, and not again for minutes.
  const first = await serverWith({});
  const counts = await seedExpiredAndLive(first);
  await serverWith({ DATABASE_URL: first.env.DATABASE_URL! });
  expect(await counts()).toEqual(AFTER_PURGE);
});

// About the local directory's tmp/ (STORAGE=fs), so not in `pnpm test:s3`: a bucket has no temporary files,
// and its objects' ages cannot be set back.
it('start-up removes nothing; the purge job removes temporary leftovers a day old, and never a stored file', async () => {
  const server = await serverWith({});
  const api = client(server.url);
  const owner = await userWithCut(api);
  const kept = (await upload(api, owner.token, owner.cutId, 'keep.mp3', sampleBytes('mp3', 80))).body;
  const stray = path.join(server.dataDir, 'files', '11111111-1111-4111-8111-111111111111.mp3');
  // Another instance sharing DATA_DIR may be writing this one right now.
  const inFlight = path.join(server.dataDir, 'tmp', 'streaming.part');
  // A server that died mid-upload a day ago left this one.
  const leftover = path.join(server.dataDir, 'tmp', 'interrupted.part');
  for (const file of [stray, inFlight, leftover]) await writeFile(file, 'x');
  const dayAndMinuteAgo = new Date(Date.now() - (24 * 60 + 1) * 60 * 1000);
  await utimes(leftover, dayAndMinuteAgo, dayAndMinuteAgo);
  await utimes(stray, dayAndMinuteAgo, dayAndMinuteAgo);
  // The purge job runs once before a server listens, then every PURGE_INTERVAL_SECONDS.
  await serverWith({ DATA_DIR: server.dataDir, DATABASE_URL: server.env.DATABASE_URL! });
  expect(await readdir(path.join(server.dataDir, 'tmp'))).toEqual([path.basename(inFlight)]);
  const stored = await readdir(path.join(server.dataDir, 'files'));
  expect(stored).toContain(`${kept.id}.mp3`);
  expect(stored).toContain(path.basename(stray));
});
