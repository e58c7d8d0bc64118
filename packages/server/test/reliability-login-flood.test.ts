import { request } from 'node:http';
import { afterAll, expect, it } from 'vitest';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

// §3 logins under a flood from a few dozen client addresses (issue 46.3): every attempt is counted, refused or
// not; the hashing queue is shared by network (/24, /64); a login vouched for (a live refresh token of the account,
// or a network it signed in from recently) waits in a reserved lane; unknown emails take no hash. The clients
// really speak from other addresses: on Linux all of 127.0.0.0/8 is loopback, so each request binds its own
// `localAddress` (no X-Forwarded-For, no TRUST_PROXY).

const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

interface Answer {
  status: number;
  code: string | undefined;
  retryAfter: string | undefined;
  setCookie: string[];
  ms: number;
}

/** POST /api/auth/login from `localAddress`, on a connection of its own. */
function loginFrom(server: TestServer, localAddress: string, json: object, cookie?: string): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  const body = JSON.stringify(json);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        localAddress,
        agent: false,
        method: 'POST',
        path: '/api/auth/login',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(cookie ? { cookie } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({
            status: res.statusCode!,
            code: text.startsWith('{') ? (JSON.parse(text) as { code?: string }).code : undefined,
            retryAfter: res.headers['retry-after'],
            setCookie: res.headers['set-cookie'] ?? [],
            ms: performance.now() - started,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function floodServer(env: Record<string, string> = {}) {
  // A quarter of the production cost (2^14): a check takes long enough for the flood to keep the queue full.
  const server = await startTestServer({
    SCRYPT_LOG_N: '14',
    REGISTER_MAX_PER_ADDRESS: '1000',
    LOGIN_MAX_SUCCESSES: '1000000',
    LOGIN_MAX_SUCCESSES_PER_ADDRESS: '1000000',
    ...env,
  });
  servers.push(server);
  return { server, api: client(server.url) };
}

it("a flood from 40 networks fills the open queue (503) but never a vouched-for victim's lane; every flood attempt is counted", async () => {
  const { server, api } = await floodServer();
  const accounts: Awaited<ReturnType<typeof api.register>>[] = [];
  for (let i = 0; i < 20; i++) accounts.push(await api.register());
  const victim = await api.register();
  // The victim signed in from home once: that network vouches for its logins there.
  const home = '127.0.200.7';
  const first = await loginFrom(server, home, { email: victim.user.email, password: victim.password });
  expect(first.status).toBe(200);
  const refreshCookie = first.setCookie.find((cookie) => cookie.startsWith('refresh_token='))!.split(';')[0]!;

  // 40 addresses, each in its own /24, 3 clients each, wrong passwords for real accounts (so real hashes).
  const floodAnswers: (Answer & { address: string })[] = [];
  let flooding = true;
  let saturated!: () => void;
  const queueFull = new Promise<void>((resolve) => (saturated = resolve));
  const flood = Promise.all(
    Array.from({ length: 40 * 3 }, async (_, n) => {
      const address = `127.0.${10 + (n % 40)}.${1 + Math.floor(n / 40)}`;
      for (let i = 0; flooding; i++) {
        const account = accounts[(n + i) % accounts.length]!;
        const answer = await loginFrom(server, address, { email: account.user.email, password: `wrong-${i}` });
        floodAnswers.push({ ...answer, address });
        if (answer.status === 503) saturated();
        if (answer.status === 429 && answer.retryAfter !== '1') await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }),
  );
  let victimAnswers: number[] = [];
  try {
    await Promise.race([queueFull, new Promise((_, reject) => setTimeout(() => reject(new Error('the flood never filled the queue')), 30_000))]);
    for (let i = 0; i < 6; i++) {
      // From home, and from a network never seen before with the session's refresh token.
      const fromHome = await loginFrom(server, home, { email: victim.user.email, password: victim.password });
      const travelling = await loginFrom(server, `127.0.${210 + i}.9`, { email: victim.user.email, password: victim.password }, refreshCookie);
      victimAnswers = [...victimAnswers, fromHome.status, travelling.status];
    }
  } finally {
    flooding = false;
    await flood;
  }
  expect(victimAnswers).toEqual(Array(12).fill(200));
  expect(floodAnswers.filter((answer) => answer.status === 503).length).toBeGreaterThan(0);
  expect(floodAnswers.filter((answer) => answer.status >= 500 && answer.status !== 503)).toEqual([]);

  // Every flood attempt but those the window refused left a counted failure, the ones refused by the queue too.
  const windowRefused = floodAnswers.filter((answer) => answer.status === 429 && answer.retryAfter !== '1').length;
  const [row] = await server.sql`select count(*)::int as n from login_failures where client_ip like '127.0.%' and client_ip not like '127.0.200.%'`;
  expect(row!.n).toBe(floodAnswers.length - windowRefused);
}, 120_000);

it('counts attempts the hashing queue refused: they reach the failure limit like any other', async () => {
  const { server, api } = await floodServer({ LOGIN_MAX_FAILURES_PER_ADDRESS: '5' });
  const target = await api.register();
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => loginFrom(server, '127.0.77.1', { email: target.user.email, password: `wrong-${i}` })),
  );
  // One network holds two places in the queue: most of the 20 are refused at once, and all 5 allowed are counted.
  expect(answers.filter((answer) => answer.status === 401).length).toBeLessThan(5);
  const [row] = await server.sql`select count(*)::int as n from login_failures where client_ip = '127.0.77.1'`;
  expect(row!.n).toBe(5);
  const next = await loginFrom(server, '127.0.77.1', { email: target.user.email, password: target.password });
  expect([next.status, next.code]).toEqual([429, 'RATE_LIMITED']);
  expect(Number(next.retryAfter)).toBeGreaterThan(1);
}, 60_000);

it('answers unknown emails without a hash on the queue, in the time a wrong password takes', async () => {
  const { server, api } = await floodServer({ LOGIN_MAX_FAILURES_PER_ADDRESS: '1000' });
  const known = await api.register();
  // 100 unknown emails at once from 100 networks take no place in the queue of 65: none is refused.
  const unknown = await Promise.all(
    Array.from({ length: 100 }, (_, i) => loginFrom(server, `127.1.${i}.1`, { email: `nobody${i}@example.com`, password: 'wrong-password' })),
  );
  expect(unknown.map((answer) => answer.status)).toEqual(Array(100).fill(401));

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const wrong: number[] = [];
  const missing: number[] = [];
  for (let i = 0; i < 7; i++) {
    wrong.push((await loginFrom(server, '127.2.0.1', { email: known.user.email, password: `wrong-${i}` })).ms);
    missing.push((await loginFrom(server, '127.2.0.1', { email: `missing${i}@example.com`, password: 'wrong-password' })).ms);
  }
  const ratio = median(missing) / median(wrong);
  expect(ratio, `unknown ${median(missing).toFixed(1)} ms, wrong password ${median(wrong).toFixed(1)} ms`).toBeGreaterThan(0.5);
  expect(ratio).toBeLessThan(2);
}, 60_000);
