// What deploy/ hands an admin for monitoring: the Prometheus alert rules (promtool checks and unit-tests them)
// and the Grafana dashboard, whose every query names metrics a real server exposes; and the server's scrape
// itself passes promtool's own lint of the text format. .ci/run installs Debian's prometheus package (promtool).
import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './support/http.js';
import { requirePrerequisite } from './support/prerequisites.js';
import { REPO_ROOT } from './support/repo-copy.js';
import { startTestServer, type TestServer } from './support/server.js';

const run = promisify(execFile);
const DEPLOY = path.join(REPO_ROOT, 'deploy');

const promtool = await run('promtool', ['--version']).then(
  () => null,
  (error: Error) => `promtool cannot run (${error.message.split('\n')[0]}); apt-get install prometheus`,
);
requirePrerequisite('promtool', promtool);

/** promtool's exit code and output for `args`, `input` on its stdin. */
function promtoolRun(args: string[], input = ''): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', args, { cwd: DEPLOY });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(input);
  });
}

/** The metric names a PromQL expression reads (ours, OpenTelemetry's HTTP ones, Node's process ones). */
const metricNames = (expr: string): string[] => [...expr.matchAll(/\b((?:http_server|bandcollab|process|nodejs)_[a-z_]+)\b/g)].map((match) => match[1]!);

describe.skipIf(promtool !== null)('monitoring', () => {
  let server: TestServer;
  let exposed: Set<string>;
  let scrape: string;
  beforeAll(async () => {
    // With a quota, so the family of accounts near it is there too.
    server = await startTestServer({ METRICS_LOOPBACK: 'true', USER_QUOTA_MB: '1024' });
    const api = client(server.url);
    await api.register();
    await api.request('GET', '/api/health');
    scrape = await (await fetch(`${server.url}/metrics`)).text();
    // Every sample's name, and each histogram's own name beside its _bucket, _sum and _count.
    exposed = new Set(scrape.split('\n').flatMap((line) => (line.startsWith('# TYPE ') ? [line.split(' ')[2]!] : [])));
    for (const name of [...exposed]) for (const suffix of ['_bucket', '_sum', '_count']) if (scrape.includes(`# TYPE ${name} histogram`)) exposed.add(`${name}${suffix}`);
  });
  afterAll(() => server?.close());

  it("passes promtool's lint of the exposition format, but for three names of prom-client's process metrics", async () => {
    const { output } = await promtoolRun(['check', 'metrics'], scrape);
    const problems = output.split('\n').filter((line) => line !== '');
    // prom-client names three gauges of its default metrics with a counter's `_total`: its names, kept as dashboards know them.
    const theirs = /^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/;
    expect(problems.filter((line) => !theirs.test(line))).toEqual([]);
    expect(scrape).toMatch(/^# TYPE bandcollab_jobs gauge$/m);
  });

  it('ships alert rules promtool accepts, and whose unit tests pass (5xx rate, job backlog, disk)', async () => {
    const checked = await promtoolRun(['check', 'rules', 'prometheus-alerts.yml']);
    expect(checked.output).toMatch(/SUCCESS: 7 rules found/);
    expect(checked.code).toBe(0);
    const tested = await promtoolRun(['test', 'rules', 'prometheus-alerts.test.yml']);
    expect(tested.output).toMatch(/SUCCESS/);
    expect(tested.code).toBe(0);
  });

  it('alerts and dashboard read only metrics the server exposes', async () => {
    const rules = await readFile(path.join(DEPLOY, 'prometheus-alerts.yml'), 'utf8');
    const ruleMetrics = [...rules.matchAll(/^\s*expr: ([\s\S]*?)(?=^\s*(?:for|labels):)/gm)].flatMap((match) => metricNames(match[1]!));
    expect(ruleMetrics.length).toBeGreaterThan(7);
    expect(ruleMetrics.filter((name) => !exposed.has(name))).toEqual([]);

    const dashboard = JSON.parse(await readFile(path.join(DEPLOY, 'grafana-dashboard.json'), 'utf8')) as { panels: Array<{ id: number; title: string; targets: Array<{ expr: string }> }> };
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const dashboardMetrics = dashboard.panels.flatMap((panel) => panel.targets.flatMap((target) => metricNames(target.expr)));
    expect(dashboardMetrics.filter((name) => !exposed.has(name))).toEqual([]);
    // Every family of ours is on the dashboard.
    const ours = [...exposed].filter((name) => /^(bandcollab|http_server)_/.test(name) && !/_(bucket|sum|count)$/.test(name));
    const shown = new Set(dashboardMetrics.map((name) => name.replace(/_(bucket|sum|count)$/, '')));
    expect(ours.filter((name) => !shown.has(name))).toEqual([]);
  });
});
