// API benchmark of the built server (run `pnpm build` first; the root `pnpm bench` does): one user with 20
// projects, `GET /api/projects` with a bearer token over 50 concurrent keep-alive connections for 10 s,
// side by side in one run with a bare @tinyhttp/app "hello" (api-bare-hello-server.mjs) driven by the same
// client. The client is a small node:http load generator: each connection sends its next request as soon as
// the previous answer ended. Prints throughput, their ratio, p50/p99 latency and errors (any non-200 or
// failed request). BENCH_API_SECONDS and BENCH_API_CONNECTIONS change the run.
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, report, round, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../dist/main.js');
const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_API_CONNECTIONS ?? 50);
const PROJECTS = 20;
const TARGETS = { ratio: 0.5, p99Ms: 20 };

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-api-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const servers = [];
try {
  const bandcollab = await start(serverMain, [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'error' });
  servers.push(bandcollab);
  const hello = await start(path.join(here, 'api-bare-hello-server.mjs'));
  servers.push(hello);

  const auth = await call(bandcollab.url, 'POST', '/api/auth/register', null, { email: `bench-${Date.now()}@example.com`, password: 'bench-password', name: 'Bench' });
  for (let i = 0; i < PROJECTS; i += 1) await call(bandcollab.url, 'POST', '/api/projects', auth.accessToken, { name: `Bench ${i + 1}` });
  const listed = await call(bandcollab.url, 'GET', '/api/projects', auth.accessToken);
  if (listed.length !== PROJECTS) throw new Error(`expected ${PROJECTS} projects, got ${listed.length}`);

  // A short warm-up of each, so neither pays for its JIT inside the measured seconds.
  await load(`${bandcollab.url}/api/projects`, { authorization: `Bearer ${auth.accessToken}` }, 1);
  await load(hello.url, {}, 1);
  const ours = await load(`${bandcollab.url}/api/projects`, { authorization: `Bearer ${auth.accessToken}` }, SECONDS);
  const bare = await load(hello.url, {}, SECONDS);

  const ratio = ours.requestsPerSecond / bare.requestsPerSecond;
  report('api GET /api/projects', {
    projects: PROJECTS,
    connections: CONNECTIONS,
    seconds: SECONDS,
    bandcollabRps: Math.round(ours.requestsPerSecond),
    bareHelloRps: Math.round(bare.requestsPerSecond),
    ratio: round(ratio),
    bandcollabP50Ms: round(ours.p50),
    bandcollabP99Ms: round(ours.p99),
    bareHelloP50Ms: round(bare.p50),
    bareHelloP99Ms: round(bare.p99),
    bandcollabErrors: ours.errors,
    bareHelloErrors: bare.errors,
    target: `ratio >= ${TARGETS.ratio}, p99 < ${TARGETS.p99Ms} ms, no errors`,
    met: ratio >= TARGETS.ratio && ours.p99 < TARGETS.p99Ms && ours.errors === 0,
  });
} finally {
  for (const server of servers) {
    server.process.kill('SIGTERM');
    await once(server.process, 'exit');
  }
  await rm(work, { recursive: true, force: true });
}

/** CONNECTIONS keep-alive connections each sending GETs back to back for `seconds`. */
async function load(url, headers, seconds) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const latencies = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const connection = async () => {
    while (performance.now() < deadline) {
      const sent = performance.now();
      const ok = await get(url, headers, agent);
      latencies.push(performance.now() - sent);
      if (!ok) errors += 1;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const percentile = (p) => latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))];
  return { requestsPerSecond: latencies.length / elapsed, p50: percentile(50), p99: percentile(99), errors };
}

/** One GET whose body is read and dropped; resolves true for a 200. */
function get(url, headers, agent) {
  return new Promise((resolve) => {
    request(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    })
      .on('error', () => resolve(false))
      .end();
  });
}
