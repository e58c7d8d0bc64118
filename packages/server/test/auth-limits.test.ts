import { afterAll, describe, expect, it } from 'vitest';
import { client, type TestResponse } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

// The abuse limits, each with small tunables so no test waits for the production windows.
// Every server trusts X-Forwarded-For, so one test process can speak from several client addresses.

const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function serverWith(env: Record<string, string>) {
  const server = await startTestServer({ TRUST_PROXY: 'true', ...env });
  servers.push(server);
  return { server, api: client(server.url) };
}

type Api = ReturnType<typeof client>;

const login = (api: Api, email: string, password: string, address = '198.51.100.1') =>
  api.request('POST', '/api/auth/login', { json: { email, password }, headers: { 'x-forwarded-for': address } });

const register = (api: Api, email: string, address = '198.51.100.1') =>
  api.request('POST', '/api/auth/register', {
    json: { email, password: 'correct horse battery', name: 'Someone' },
    headers: { 'x-forwarded-for': address },
  });

const statuses = (responses: TestResponse[]) => responses.map((r) => r.status).sort();

function expectRateLimited(response: TestResponse, windowSeconds: number): void {
  expect(response.status).toBe(429);
  expect(response.body.code).toBe('RATE_LIMITED');
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
}

describe('login failures', () => {
  it('limits one client address to LOGIN_MAX_FAILURES_PER_ADDRESS failures over all emails', async () => {
    const { api } = await serverWith({ LOGIN_MAX_FAILURES_PER_ADDRESS: '5' });
    for (let i = 0; i < 5; i++) expect((await login(api, `guess${i}@example.com`, 'wrong-password')).status).toBe(401);
    expectRateLimited(await login(api, 'guess5@example.com', 'wrong-password'), 900);
    expect((await login(api, 'guess5@example.com', 'wrong-password', '198.51.100.2')).status).toBe(401);
  });

  it('holds the per-address limit under 20 simultaneous guesses at different emails', async () => {
    const { api } = await serverWith({ LOGIN_MAX_FAILURES_PER_ADDRESS: '5' });
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => login(api, `parallel${i}@example.com`, 'wrong-password')));
    // At most the allowance is counted; one network's third check at once is refused by the hashing queue (429,
    // counted all the same), so fewer may be checked.
    const checked = responses.filter((r) => r.status === 401).length;
    expect(checked).toBeLessThanOrEqual(5);
    expect(statuses(responses)).toEqual([...Array(checked).fill(401), ...Array(20 - checked).fill(429)]);
    for (const limited of responses.filter((r) => r.status === 429)) expectRateLimited(limited, 900);
  });

  it('never asks to retry after longer than the window, when the attempt that fills it was counted after the request began', async () => {
    const { server, api } = await serverWith({ LOGIN_MAX_FAILURES_PER_ADDRESS: '1' });
    const address = '198.51.100.7';
    // The failure that fills the window is recorded while this login waits on the table: after its transaction
    // began, as when another request of the address held the lock first.
    let refused: Promise<TestResponse> | undefined;
    await server.sql.begin(async (tx) => {
      await tx`lock table login_failures in access exclusive mode`;
      refused = login(api, 'late@example.com', 'wrong-password', address);
      while ((await server.sql`select 1 from pg_locks where relation = 'login_failures'::regclass and not granted`).length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await tx`insert into login_failures (email, client_ip, failed_at) values ('first@example.com', ${address}, clock_timestamp())`;
    });
    expectRateLimited(await refused!, 900);
  });

  it('keeps answering 429 to the right password until the window frees an attempt', async () => {
    const { server, api } = await serverWith({ LOGIN_MAX_FAILURES: '2', LOGIN_WINDOW_SECONDS: '60' });
    const user = await api.register();
    expect((await login(api, user.user.email, 'wrong-password')).status).toBe(401);
    expect((await login(api, user.user.email, 'wrong-password')).status).toBe(401);
    expectRateLimited(await login(api, user.user.email, user.password), 60);
    // The window is counted by the database's clock: the failures are aged past it instead of waiting for it.
    await server.sql`update login_failures set failed_at = failed_at - interval '59 seconds' where email = ${user.user.email}`;
    expectRateLimited(await login(api, user.user.email, user.password), 1);
    await server.sql`update login_failures set failed_at = failed_at - interval '1 second' where email = ${user.user.email}`;
    expect((await login(api, user.user.email, user.password)).status).toBe(200);
  });

  it('does not count a successful login as a failure, and a success clears the failures of that email and address', async () => {
    const { server, api } = await serverWith({ LOGIN_MAX_FAILURES: '3' });
    const user = await api.register();
    expect((await login(api, user.user.email, 'wrong-password')).status).toBe(401);
    expect((await login(api, user.user.email, 'wrong-password')).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await login(api, user.user.email, user.password)).status).toBe(200);
    const [row] = await server.sql`select count(*)::int as n from login_failures where email = ${user.user.email}`;
    expect(row!.n).toBe(0);
    for (let i = 0; i < 3; i++) expect((await login(api, user.user.email, 'wrong-password')).status).toBe(401);
    expectRateLimited(await login(api, user.user.email, 'wrong-password'), 900);
  });
});

describe('successful logins', () => {
  it('limits LOGIN_MAX_SUCCESSES per account, from any address; other accounts are not held up', async () => {
    const { api } = await serverWith({ LOGIN_MAX_SUCCESSES: '3' });
    const user = await api.register();
    const other = await api.register();
    for (let i = 0; i < 3; i++) expect((await login(api, user.user.email, user.password, `198.51.100.${10 + i}`)).status).toBe(200);
    expectRateLimited(await login(api, user.user.email, user.password, '198.51.100.20'), 900);
    expect((await login(api, other.user.email, other.password, '198.51.100.20')).status).toBe(200);
  });

  it('limits LOGIN_MAX_SUCCESSES_PER_ADDRESS over all accounts; other addresses are not held up', async () => {
    const { api } = await serverWith({ LOGIN_MAX_SUCCESSES_PER_ADDRESS: '3' });
    // One after another: the password checks of one address are queued one running and one waiting (past that, 429).
    const users = [];
    for (let i = 0; i < 4; i++) users.push(await api.register());
    for (const user of users.slice(0, 3)) expect((await login(api, user.user.email, user.password)).status).toBe(200);
    const last = users[3]!;
    expectRateLimited(await login(api, last.user.email, last.password), 900);
    expect((await login(api, last.user.email, last.password, '198.51.100.2')).status).toBe(200);
  });
});

describe('registrations', () => {
  it('allows REGISTER_MAX_PER_ADDRESS per client address in the window, counted before hashing, also in parallel', async () => {
    const { server, api } = await serverWith({ REGISTER_MAX_PER_ADDRESS: '3' });
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => register(api, `new${i}@example.com`)));
    // As with logins, one network's third hash at once may be refused by the hashing queue (429, counted all the same).
    const registered = responses.filter((r) => r.status === 201).length;
    expect(registered).toBeLessThanOrEqual(3);
    expect(statuses(responses)).toEqual([...Array(registered).fill(201), ...Array(10 - registered).fill(429)]);
    for (const limited of responses.filter((r) => r.status === 429)) expectRateLimited(limited, 3600);
    const [row] = await server.sql`select count(*)::int as n from users`;
    expect(row!.n).toBe(registered);

    for (let i = registered; i < 3; i++) expect((await register(api, `after${i}@example.com`)).status).toBe(201);
    expectRateLimited(await register(api, 'later@example.com'), 3600);
    expect((await register(api, 'elsewhere@example.com', '198.51.100.2')).status).toBe(201);
  });
});

describe('password hashing', () => {
  it('answers 429 to one address flooding valid logins past one running and one waiting, while another address logs in', async () => {
    // A quarter of the production cost (2^14), so each check is long enough for the flood to keep the queue full.
    const { api } = await serverWith({ LOG_LEVEL: 'warn', SCRYPT_LOG_N: '14', LOGIN_MAX_SUCCESSES: '1000000', LOGIN_MAX_SUCCESSES_PER_ADDRESS: '1000000' });
    const flooder = await api.register();
    const bystander = await api.register();
    // 20 clients behind one address, each sending its next login as soon as the previous is answered.
    const floodAnswers: TestResponse[] = [];
    let flooding = true;
    let inFullSwing!: () => void;
    const fullSwing = new Promise<void>((resolve) => (inFullSwing = resolve));
    const flood = Promise.all(
      Array.from({ length: 20 }, async () => {
        while (flooding) {
          floodAnswers.push(await login(api, flooder.user.email, flooder.password, '198.51.100.66'));
          if (floodAnswers.length === 20) inFullSwing();
        }
      }),
    );
    try {
      await fullSwing;
      const bystanderAnswers: number[] = [];
      // From another network: the queue's share is per /24, so a neighbour of the flooder's address would share its share.
      for (let i = 0; i < 5; i++) bystanderAnswers.push((await login(api, bystander.user.email, bystander.password, '203.0.113.77')).status);
      expect(bystanderAnswers).toEqual([200, 200, 200, 200, 200]);
    } finally {
      flooding = false;
      await flood;
    }
    expect(floodAnswers.filter((r) => r.status === 503)).toEqual([]);
    const limited = floodAnswers.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    // Refused by the hashing queue (Retry-After: 1), or by the failure limits, which count an attempt in flight.
    for (const response of limited) {
      expect(response.body.code).toBe('RATE_LIMITED');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  }, 90_000);

  it('refuses password checks past the hashing bound and its queue with 503 UNAVAILABLE and Retry-After: 1, counted', async () => {
    // A quarter of the production cost (2^14): a check still takes long enough that the first ones are hashing
    // when the rest of 100 logins sent at once (each from its own network, for a real account: an unknown email
    // takes no hash) arrive, so the bound and its queue (65 places on two cores) fill.
    const { server, api } = await serverWith({ SCRYPT_LOG_N: '14', REGISTER_MAX_PER_ADDRESS: '100' });
    const accounts: Awaited<ReturnType<typeof api.register>>[] = [];
    for (let i = 0; i < 10; i++) accounts.push(await api.register());
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) => login(api, accounts[i % 10]!.user.email, 'wrong-password', `10.${i}.0.1`)),
    );
    const refused = responses.filter((r) => r.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    for (const response of refused) {
      expect(response.body.code).toBe('UNAVAILABLE');
      expect(response.headers.get('retry-after')).toBe('1');
    }
    expect(responses.filter((r) => r.status !== 503).every((r) => r.status === 401)).toBe(true);

    // A refused attempt is an attempt: each of the 100 counts as a failure.
    const [row] = await server.sql`select count(*)::int as n from login_failures where client_ip like '10.%'`;
    expect(row!.n).toBe(100);
  }, 90_000);
});
