// GET /metrics' cost (§22), on two built servers (`pnpm build` first): the same `GET /api/projects` load (one
// user with 20 projects, 50 keep-alive connections) against one with metrics on (METRICS_LOOPBACK) and one
// with them off, in alternating rounds so drift hits both alike: throughput and the server's CPU per request
// (target: on ≥ 0.97× off). Then the on server gets 10,000 projects and is scraped 100 times: the CPU a scrape
// costs the server (target ≤ 5 ms) and its size (≤ 100 KB). BENCH_METRICS_SECONDS sets a round's length.
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, cpuSeconds, load, report, round, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const serverMain = path.resolve(here, '../dist/main.js');
const SECONDS = Number(process.env.BENCH_METRICS_SECONDS ?? 5);
const ROUNDS = 3;
const CONNECTIONS = 50;
const PROJECTS = 20;
const SCRAPE_PROJECTS = 10_000;
const SCRAPES = 100;
const TARGETS = { ratio: 0.97, scrapeCpuMs: 5, scrapeKB: 100 };

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-metrics-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
const servers = [];
try {
  const base = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error' };
  // 101 accounts register from here on the first.
  const on = await start(serverMain, [], { ...base, DATA_DIR: path.join(work, 'on'), METRICS_LOOPBACK: 'true', REGISTER_MAX_PER_ADDRESS: '1000' });
  servers.push(on);
  const off = await start(serverMain, [], { ...base, DATA_DIR: path.join(work, 'off') });
  servers.push(off);
  const sides = [];
  for (const server of [on, off]) {
    const auth = await call(server.url, 'POST', '/api/auth/register', null, { email: `bench-${Date.now()}@example.com`, password: 'bench-password', name: 'Bench' });
    for (let i = 0; i < PROJECTS; i += 1) await call(server.url, 'POST', '/api/projects', auth.accessToken, { name: `Bench ${i + 1}` });
    const url = `${server.url}/api/projects`;
    const headers = { authorization: `Bearer ${auth.accessToken}` };
    await load(url, headers, 1, CONNECTIONS);
    sides.push({ server, url, headers, requests: 0, seconds: 0, cpu: 0, errors: 0 });
  }
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const cpuBefore = await cpuSeconds(side.server.process.pid);
      const result = await load(side.url, side.headers, SECONDS, CONNECTIONS);
      side.cpu += (await cpuSeconds(side.server.process.pid)) - cpuBefore;
      side.requests += result.requests;
      side.seconds += result.requests / result.requestsPerSecond;
      side.errors += result.errors;
    }
  }
  const [withMetrics, without] = sides.map((side) => ({ rps: side.requests / side.seconds, cpuMsPerRequest: (side.cpu * 1000) / side.requests, errors: side.errors }));
  const ratio = withMetrics.rps / without.rps;
  report('metrics: GET /api/projects with metrics on vs off', {
    connections: CONNECTIONS,
    secondsPerSide: SECONDS * ROUNDS,
    onRps: Math.round(withMetrics.rps),
    offRps: Math.round(without.rps),
    ratio: round(ratio),
    onCpuMsPerRequest: round(withMetrics.cpuMsPerRequest * 1000) / 1000,
    offCpuMsPerRequest: round(without.cpuMsPerRequest * 1000) / 1000,
    cpuPerRequestRatio: round(withMetrics.cpuMsPerRequest / without.cpuMsPerRequest),
    errors: withMetrics.errors + without.errors,
    target: `ratio >= ${TARGETS.ratio}, no errors`,
    met: ratio >= TARGETS.ratio && withMetrics.errors + without.errors === 0,
  });

  // 10,000 projects of 100 accounts: nothing a scrape reads grows with them but the cached totals' queries.
  for (let owner = 0; owner < 100; owner += 1) {
    const auth = await call(on.url, 'POST', '/api/auth/register', null, { email: `owner-${owner}-${Date.now()}@example.com`, password: 'bench-password', name: 'Owner' });
    for (let batch = 0; batch < SCRAPE_PROJECTS / 100 / 10; batch += 1) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => call(on.url, 'POST', '/api/projects', auth.accessToken, { name: `P ${batch * 10 + i}` })));
    }
  }
  let size = 0;
  const cpuBefore = await cpuSeconds(on.process.pid);
  for (let scrape = 0; scrape < SCRAPES; scrape += 1) {
    const response = await fetch(`${on.url}/metrics`);
    size = (await response.arrayBuffer()).byteLength;
  }
  const scrapeCpuMs = (((await cpuSeconds(on.process.pid)) - cpuBefore) * 1000) / SCRAPES;
  report('metrics: a scrape with 10,000 projects', {
    projects: SCRAPE_PROJECTS,
    scrapes: SCRAPES,
    cpuMsPerScrape: round(scrapeCpuMs),
    sizeKB: round(size / 1024),
    target: `<= ${TARGETS.scrapeCpuMs} ms CPU, <= ${TARGETS.scrapeKB} KB`,
    met: scrapeCpuMs <= TARGETS.scrapeCpuMs && size / 1024 <= TARGETS.scrapeKB,
  });
} finally {
  for (const server of servers) {
    server.process.kill('SIGTERM');
    await once(server.process, 'exit');
  }
  await rm(work, { recursive: true, force: true });
}
