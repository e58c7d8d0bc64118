import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectStatus } from './authz/fixture.js';
import { sampleBytes, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { type ServerProcess, spawnServer } from './support/process.js';
import { createTestDatabase } from './support/server.js';

// Parallel brute force against the built server, as a user runs it (abuse limits):
// simultaneous guesses get at most the allowance evaluated, and a flood of logins from many addresses
// (the hashing bound is all that stands between it and the thread pool) leaves file downloads their speed.

const MiB = 1024 * 1024;
const ROUNDS = 5;

let dataDir: string;
let server: ServerProcess;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-bruteforce-'));
  await chmod(dataDir, 0o755);
  // A quarter of the production hashing cost (2^14), and every X-Forwarded-For hop trusted: each guess may come
  // from a new address. The flood is as hard on the thread pool at that cost: each hashing slot is busy half the
  // time whatever one hash costs, and cheaper hashes mean more logins answered per second. What the lower cost
  // saves is the wait for the queue of 64 hashes per slot to drain before each round's download alone (some 27 s at 2^16).
  server = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: await createTestDatabase(), SCRYPT_LOG_N: '14', TRUST_PROXY: 'true' });
  api = client(server.url);
});
afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await rm(dataDir, { recursive: true, force: true });
});

it('evaluates at most 10 of 40 simultaneous wrong passwords for one account; the rest are 429 with Retry-After', async () => {
  const victim = await api.register();
  const guesses = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      api.request('POST', '/api/auth/login', { json: { email: victim.user.email, password: `guess-${i}` }, headers: { 'x-forwarded-for': '198.51.100.9' } }),
    ),
  );
  const evaluated = guesses.filter((r) => r.status === 401).length;
  const limited = guesses.filter((r) => r.status === 429);
  // Of the allowance, the ones past the hashing bound answer 503 unchecked (and stay counted).
  const refused = guesses.filter((r) => r.status === 503).length;
  console.log(`40 simultaneous wrong passwords: ${evaluated} evaluated (401), ${limited.length} limited (429), ${refused} refused unchecked (503)`);
  expect(evaluated).toBeLessThanOrEqual(10);
  expect(limited.length).toBeGreaterThanOrEqual(30 - refused);
  expect(evaluated + limited.length + refused).toBe(40);
  for (const response of limited) {
    expect(response.body.code).toBe('RATE_LIMITED');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }
});

it('keeps a 100 MiB download at least half as fast while logins flood in from many addresses', async () => {
  const owner = await userWithCut(api);
  const file = await expectStatus(upload(api, owner.token, owner.cutId, 'stems.zip', sampleBytes('zip', 100 * MiB)), 201);
  // One sample is three downloads in a row: a single one (some 200 ms) is at the mercy of the scheduler.
  const sample = async () => {
    let total = 0;
    for (let i = 0; i < 3; i++) total += await timedDownload(`${server.url}/api/files/${file.id}/download`, owner.token);
    return total;
  };

  // Rounds of a download alone, then one during the flood. The machine's other load drifts (the first rounds of a
  // run are often slower in both kinds), so each round's two samples are compared with each other, and the
  // median of those ratios with the bound. A sample before the flood starts warms the page cache.
  await sample();
  // Real accounts: an unknown email is answered without a hash, so only known ones load the hashing bound.
  const emails: string[] = [];
  for (let i = 0; i < 8; i++) emails.push((await api.register()).user.email);
  const flood = startLoginFlood(server.url, emails);
  try {
    const alone: number[] = [];
    const flooded: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await flood.pause();
      alone.push(await sample());
      await flood.resume();
      flooded.push(await sample());
    }
    const answers = await flood.stop();
    const ratios = flooded.map((time, round) => time / alone[round]!);
    const ratio = median(ratios);
    console.log(
      `Three 100 MiB downloads in ${ROUNDS} rounds: median ratio ${ratio.toFixed(2)} during the flood to alone ` +
        `(ratios ${ratios.map((r) => r.toFixed(2)).join(', ')}; alone ${alone.map((t) => t.toFixed(0)).join(', ')} ms; ` +
        `flooded ${flooded.map((t) => t.toFixed(0)).join(', ')} ms); flood answers by status: ${JSON.stringify(answers)}`,
    );
    expect(answers['500']).toBeUndefined();
    expect(answers['503']).toBeGreaterThan(0);
    expect(ratio).toBeLessThanOrEqual(2);
  } finally {
    flood.child.kill('SIGKILL');
  }
}, 300_000);

/** Milliseconds to receive the whole body. */
function timedDownload(url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    get(url, { headers: { authorization: `Bearer ${token}` } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => {
        if (response.statusCode !== 200 || bytes !== 100 * MiB) reject(new Error(`download answered ${response.statusCode} with ${bytes} bytes`));
        else resolve(Number(process.hrtime.bigint() - started) / 1e6);
      });
      response.on('error', reject);
    }).on('error', reject);
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface LoginFlood {
  child: ChildProcess;
  /** Resolves once every client is idle (in-flight logins answered). */
  pause(): Promise<void>;
  /** Resolves once the clients have had 100 answers since resuming: the flood is at full strength. */
  resume(): Promise<void>;
  /** Ends the flood; answers how many responses came back per status. */
  stop(): Promise<Record<string, number>>;
}

/**
 * 128 clients in another process (twice what the hashing bound and its queue hold on 2 cores), each sending wrong-password logins for one of a few
 * real accounts from a new address in a new /24 network (so no limit per email and address applies, nor the queue's share per network: only the
 * hashing bound does), the next as soon as an answer comes back,
 * after the Retry-After a 503 asks for. That keeps the hashing full all the time; a client that ignores
 * Retry-After floods with plain requests, which the connection limits are for, not the hashing bound.
 */
function startLoginFlood(baseUrl: string, emails: string[]): LoginFlood {
  const script = `
    const CLIENTS = 128;
    const EMAILS = ${JSON.stringify(emails)};
    const counts = {};
    let state = 'running';
    let resumed = null;
    let wake = () => {};
    let idle = 0;
    let answersSinceResume = 0;
    let n = 0;
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    const reportIdle = () => { if (idle === CLIENTS) process.send('paused'); };
    process.on('message', (message) => {
      if (message === 'pause') { state = 'paused'; resumed = new Promise((resolve) => (wake = resolve)); reportIdle(); }
      if (message === 'resume') { state = 'running'; answersSinceResume = 0; wake(); }
      if (message === 'stop') { state = 'stopped'; wake(); }
    });
    async function client() {
      for (;;) {
        if (state === 'paused') { idle += 1; reportIdle(); await resumed; idle -= 1; }
        if (state === 'stopped') return;
        n += 1;
        let status;
        try {
          const response = await fetch(${JSON.stringify(`${baseUrl}/api/auth/login`)}, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.' + (n >> 16 & 255) + '.' + (n & 255) + '.' + (n >> 8 & 255) },
            body: JSON.stringify({ email: EMAILS[n % EMAILS.length], password: 'wrong-password' }),
          });
          await response.arrayBuffer();
          status = response.status;
          if (status === 503) await sleep(1000 * Number(response.headers.get('retry-after')));
        } catch {
          status = 'network error';
        }
        counts[status] = (counts[status] ?? 0) + 1;
        answersSinceResume += 1;
        if (answersSinceResume === 100) process.send('full');
      }
    }
    Promise.all(Array.from({ length: CLIENTS }, client)).then(() => process.send(counts, () => process.exit(0)));
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = (expected: string) => new Promise<unknown>((resolve) => child.once('message', (message) => resolve(message ?? expected)));
  let full = next('full');
  return {
    child,
    async pause() {
      await full;
      const paused = next('paused');
      child.send('pause');
      await paused;
    },
    async resume() {
      full = next('full');
      child.send('resume');
      await full;
    },
    async stop() {
      const counted = next('counts');
      child.send('stop');
      return (await counted) as Record<string, number>;
    },
  };
}
