// Login capacity of the built server (run `pnpm build` first; the root `pnpm bench` does), at the production
// scrypt cost (the default SCRYPT_LOG_N): 50 people log in at the same moment, each from their own client
// address (127.0.2.1 … on loopback, where all of 127.0.0.0/8 answers), each to their own account. Every one
// must be answered 200: none refused with 503 by the hashing bound, none 429 by the per-address share of its
// queue. Prints the answers by status, the wall time and the answer latencies (the last waits for the queue to
// drain: one hash per core but one, each resting as long as it worked). BENCH_LOGINS changes the count.
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Scrypt from 'scrypt-kdf';
import { median, report, round, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../dist/main.js');
const LOGINS = Number(process.env.BENCH_LOGINS ?? 50);
const PASSWORD = 'bench-password';
/** SCRYPT_LOG_N's default (core/config.ts), which the server runs with here. */
const DEFAULT_SCRYPT_LOG_N = 16;

/** A JSON POST from `localAddress`; resolves with the status (or the network error) and how long the answer took. */
function post(baseUrl, pathname, localAddress, json) {
  const body = JSON.stringify(json);
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(`${baseUrl}${pathname}`, {
      method: 'POST',
      agent: false,
      localAddress,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }));
    });
    req.on('error', (error) => resolve({ status: error.code ?? 'network error', ms: performance.now() - started }));
    req.end(body);
  });
}

const address = (block, n) => `127.0.${block}.${n + 1}`;
const email = (n) => `bench-login-${n}@example.com`;

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-logins-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
let server;
try {
  server = await start(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
  // Each account registers from its own address (at most 20 registrations per address and hour).
  for (let n = 0; n < LOGINS; n += 1) {
    const registered = await post(server.url, '/api/auth/register', address(1, n), { email: email(n), password: PASSWORD, name: `Bench ${n}` });
    if (registered.status !== 201) throw new Error(`register ${n}: ${registered.status}`);
  }

  // What one hash costs on this machine right now (other load slows it): the figures below scale with it.
  const hashStarted = performance.now();
  await Scrypt.kdf(PASSWORD, { logN: DEFAULT_SCRYPT_LOG_N });
  const hashMs = performance.now() - hashStarted;

  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: LOGINS }, (_, n) => post(server.url, '/api/auth/login', address(2, n), { email: email(n), password: PASSWORD })),
  );
  const seconds = (performance.now() - started) / 1000;
  const byStatus = {};
  for (const { status } of answers) byStatus[status] = (byStatus[status] ?? 0) + 1;
  const latencies = answers.map(({ ms }) => ms).sort((a, b) => a - b);
  report('logins at once, each from its own address, production scrypt cost', {
    logins: LOGINS,
    cores: os.availableParallelism(),
    loadAverage: round(os.loadavg()[0]),
    hashMs: Math.round(hashMs),
    answersByStatus: byStatus,
    allSucceeded: byStatus[200] === LOGINS,
    seconds: round(seconds),
    loginsPerSecond: round(LOGINS / seconds),
    p50Ms: Math.round(median(latencies)),
    maxMs: Math.round(latencies.at(-1)),
  });
  if (byStatus[200] !== LOGINS) process.exitCode = 1;
} finally {
  if (server) {
    server.process.kill('SIGTERM');
    await once(server.process, 'exit');
  }
  await rm(work, { recursive: true, force: true });
}
