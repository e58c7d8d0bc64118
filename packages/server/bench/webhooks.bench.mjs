// Webhook benchmark of the built server (§19; `pnpm build` first, the root `pnpm bench` does), receivers on
// loopback (WEBHOOKS_ALLOW_HTTP and WEBHOOKS_ALLOW_PRIVATE on, as for a LAN set-up):
//  1. commit -> first attempt: one endpoint; COMMITS project updates one after another, each timed from the
//     API's answer (its transaction committed) to the receiver's first byte of its delivery. p50/p95; target
//     p95 <= 1 s;
//  2. fan-out: 20 endpoints on the project, 1,000 project updates made ten at a time (20,000 deliveries);
//     GET /api/projects throughput from the first of them on, while they are made and delivered, against the
//     same load with an idle queue. Target >= 0.9x. Then how long the last delivery took.
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, load, report, round, start } from './support.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const COMMITS = Number(process.env.BENCH_WEBHOOK_COMMITS ?? 200);
const FAN_OUT = { endpoints: 20, events: 1000 };
const LOAD = { seconds: 8, connections: 8 };
const TARGETS = { firstAttemptP95Ms: 1000, listDuringFanOut: 0.9 };

const work = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-webhooks-bench-'));
await chmod(work, 0o755); // the embedded PostgreSQL runs as user postgres when we are root
// Each delivery's arrival, by the description the update set (one per event), first attempt only.
const arrivals = new Map();
let delivered = 0;
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const at = performance.now();
    delivered += 1;
    const description = JSON.parse(Buffer.concat(chunks).toString('utf8')).data?.data?.project?.description;
    if (description && !arrivals.has(description)) arrivals.set(description, at);
    res.writeHead(204).end();
  });
});
receiver.keepAliveTimeout = 60_000;
receiver.listen(0, '127.0.0.1');
await once(receiver, 'listening');
const receiverUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

const server = await start(path.resolve(here, '../dist/main.js'), [], {
  PORT: '0',
  HOST: '127.0.0.1',
  DATA_DIR: path.join(work, 'data'),
  LOG_LEVEL: 'error',
  WEBHOOKS_ALLOW_HTTP: 'true',
  WEBHOOKS_ALLOW_PRIVATE: 'true',
});
try {
  const auth = await call(server.url, 'POST', '/api/auth/register', null, { email: 'bench@example.com', password: 'bench-password', name: 'Bench' });
  const token = auth.accessToken;
  const project = await call(server.url, 'POST', '/api/projects', token, { name: 'Bench' });
  const update = (description) => call(server.url, 'PUT', `/api/projects/${project.id}`, token, { description });
  const hook = () => call(server.url, 'POST', `/api/projects/${project.id}/webhooks`, token, { url: receiverUrl, events: ['project.updated'] });

  // 1. Commit -> first attempt, one update at a time.
  const first = await hook();
  const latencies = [];
  for (let i = 0; i < COMMITS; i++) {
    const description = `commit ${i}`;
    await update(description);
    const committed = performance.now();
    for (const until = performance.now() + 30_000; !arrivals.has(description); ) {
      if (performance.now() > until) {
        const deliveries = await call(server.url, 'GET', `/api/webhooks/${first.id}/deliveries`, token);
        throw new Error(`no delivery of "${description}" within 30 s: ${JSON.stringify(deliveries).slice(0, 2000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    latencies.push(arrivals.get(description) - committed);
  }
  latencies.sort((a, b) => a - b);
  const percentile = (p) => latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))];
  report('webhooks commit-to-first-attempt', {
    commits: COMMITS,
    p50Ms: round(percentile(50)),
    p95Ms: round(percentile(95)),
    maxMs: round(latencies.at(-1)),
    targetP95Ms: TARGETS.firstAttemptP95Ms,
  });
  await call(server.url, 'DELETE', `/api/webhooks/${first.id}`, token);

  // 2. Fan-out: the list's throughput idle, then while 20,000 deliveries go out.
  for (let i = 0; i < FAN_OUT.endpoints; i++) await hook();
  const listUrl = `${server.url}/api/projects`;
  const headers = { authorization: `Bearer ${token}` };
  await load(listUrl, headers, 1, LOAD.connections);
  const idle = await load(listUrl, headers, LOAD.seconds, LOAD.connections);
  const before = delivered;
  const started = performance.now();
  // The list is loaded from the first event on: while the events are made (each fans out to 20 deliveries in
  // its transaction) and delivered.
  const during = load(listUrl, headers, LOAD.seconds, LOAD.connections);
  for (let i = 0; i < FAN_OUT.events; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => update(`fan-out ${i + j}`)));
  const queuedSeconds = (performance.now() - started) / 1000;
  const { requestsPerSecond, p99, errors } = await during;
  const deliveredDuring = delivered - before;
  const expected = FAN_OUT.events * FAN_OUT.endpoints;
  while (delivered - before < expected) await new Promise((resolve) => setTimeout(resolve, 50));
  report('webhooks fan-out', {
    endpoints: FAN_OUT.endpoints,
    events: FAN_OUT.events,
    deliveries: expected,
    secondsToQueueEvents: round(queuedSeconds),
    secondsToDeliverAll: round((performance.now() - started) / 1000),
    deliveredDuringLoad: deliveredDuring,
    idleListPerSecond: round(idle.requestsPerSecond),
    duringFanOutListPerSecond: round(requestsPerSecond),
    duringFanOutListP99Ms: round(p99),
    ratio: round(requestsPerSecond / idle.requestsPerSecond),
    target: TARGETS.listDuringFanOut,
    errors: idle.errors + errors,
  });
} finally {
  server.process.kill('SIGTERM');
  await once(server.process, 'exit');
  receiver.close();
  await rm(work, { recursive: true, force: true });
}
