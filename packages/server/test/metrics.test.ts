// GET /metrics (§22) scraped from a real server and read by a maintained Prometheus text parser
// (parse-prometheus-text-format, prom2json's output): who may scrape, every documented family with its labels,
// route templates rather than paths, counters that move with what feeds them, bounded series.
import { randomUUID } from 'node:crypto';
import parsePrometheusTextFormat, { type Family, type Sample } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analysed, previewed, toneWav, upload, userWithCut } from './support/files.js';
import { client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';
import { TUS } from './support/tus.js';

const METRICS_TOKEN = 'metrics-token-metrics-token-0123456789abcdef';

/** Every family the contract and the OpenAPI document name, with the labels its samples carry. */
const FAMILIES: Record<string, string[]> = {
  http_server_request_duration_seconds: ['http_request_method', 'http_route', 'http_response_status_code'],
  http_server_active_requests: ['http_request_method'],
  http_server_request_body_size_bytes_total: ['http_request_method', 'http_route'],
  http_server_response_body_size_bytes_total: ['http_request_method', 'http_route'],
  bandcollab_connections_open: [],
  bandcollab_websockets_open: [],
  bandcollab_uploads_started_total: ['protocol'],
  bandcollab_uploads_completed_total: ['protocol'],
  bandcollab_uploads_failed_total: ['protocol'],
  bandcollab_uploads_terminated_total: [],
  bandcollab_upload_received_bytes_total: ['protocol'],
  bandcollab_upload_duration_seconds: ['protocol'],
  bandcollab_store_operation_duration_seconds: ['operation'],
  bandcollab_store_operation_errors_total: ['operation'],
  bandcollab_jobs: ['kind', 'state'],
  bandcollab_jobs_oldest_queued_age_seconds: ['kind'],
  bandcollab_webhook_deliveries_total: ['outcome'],
  bandcollab_emails_total: ['outcome'],
  bandcollab_login_failures_total: [],
  bandcollab_rate_limited_total: ['http_route'],
  bandcollab_analysis_duration_seconds: ['outcome'],
  bandcollab_preview_duration_seconds: ['outcome'],
  bandcollab_stored_bytes: ['type'],
  bandcollab_stored_files: ['type'],
  bandcollab_disk_free_bytes: [],
  bandcollab_disk_size_bytes: [],
  process_cpu_seconds_total: [],
  process_resident_memory_bytes: [],
  nodejs_eventloop_lag_seconds: [],
  nodejs_heap_size_used_bytes: [],
};

async function scrape(url: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(`${url}/metrics`, { headers });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/**
 * The scrape's families by name. The parser folds a labelled histogram's samples into one set of buckets and
 * drops their labels, so a histogram's `_bucket`, `_sum` and `_count` lines are read as the plain samples
 * they are (their TYPE lines left out), and each histogram is its `_count` family under its own name.
 */
async function families(server: TestServer): Promise<Map<string, Family>> {
  const answer = await scrape(server.url, { authorization: `Bearer ${METRICS_TOKEN}` });
  expect(answer.status).toBe(200);
  const histograms = [...answer.text.matchAll(/^# TYPE (\S+) histogram$/gm)].map((match) => match[1]!);
  const parsed = parsePrometheusTextFormat(answer.text.replace(/^# TYPE \S+ histogram\n/gm, ''));
  // Read so, a histogram's lines come as a run of families per label set: one family of each name, their samples together.
  const byName = new Map<string, Family>();
  for (const family of parsed) {
    const seen = byName.get(family.name);
    if (seen) seen.metrics.push(...family.metrics);
    else byName.set(family.name, family);
  }
  for (const name of histograms) {
    byName.set(name, { name, help: byName.get(name)?.help ?? '', type: 'HISTOGRAM', metrics: byName.get(`${name}_count`)?.metrics ?? [] });
  }
  return byName;
}

const matching = (family: Family | undefined, labels: Record<string, string>): Sample[] =>
  (family?.metrics ?? []).filter((sample) => Object.entries(labels).every(([name, value]) => sample.labels?.[name] === value));
/** A counter's or gauge's value, or a histogram's count, summed over the samples with those labels. */
const total = (family: Family | undefined, labels: Record<string, string> = {}): number =>
  matching(family, labels).reduce((sum, sample) => sum + Number(sample.value ?? sample.count ?? 0), 0);
/** The label sets of the HTTP families' samples: what a request to a new path could add. */
const httpSeries = (all: Map<string, Family>): string[] =>
  [...all.values()].filter((family) => family.name.startsWith('http_server_')).flatMap((family) => family.metrics.map((sample) => `${family.name}${JSON.stringify(sample.labels ?? {})}`));
/** The lines a scrape stores as series: every sample line of the text format. */
const seriesCount = (text: string): number => text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;

describe('who may scrape', () => {
  it('is off by default: 404 in the error format, as a path no route answers', async () => {
    const server = await startTestServer();
    try {
      const answer = await scrape(server.url);
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.text)).toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await server.close();
    }
  });

  it('takes METRICS_TOKEN as a Bearer token: none or a wrong one is 401', async () => {
    const server = await startTestServer({ METRICS_TOKEN });
    try {
      expect((await scrape(server.url)).status).toBe(401);
      expect((await scrape(server.url, { authorization: `Bearer ${METRICS_TOKEN.slice(0, -1)}x` })).status).toBe(401);
      const answer = await scrape(server.url, { authorization: `Bearer ${METRICS_TOKEN}` });
      expect(answer.status).toBe(200);
      expect(answer.type).toMatch(/^text\/plain; version=0\.0\.4/);
    } finally {
      await server.close();
    }
  });

  it('with METRICS_LOOPBACK answers loopback clients without a token, and not a client a trusted proxy forwards', async () => {
    const server = await startTestServer({ METRICS_LOOPBACK: 'true', TRUST_PROXY: 'true' });
    try {
      expect((await scrape(server.url)).status).toBe(200);
      expect((await scrape(server.url, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(404);
      expect((await scrape(server.url, { 'x-forwarded-for': '203.0.113.9, 127.0.0.1' })).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('counts the accounts at 90 % of USER_QUOTA_MB', async () => {
    const server = await startTestServer({ METRICS_TOKEN, USER_QUOTA_MB: '1' });
    try {
      const api = client(server.url);
      const [near, far] = [await userWithCut(api), await userWithCut(api)];
      expect((await upload(api, near.token, near.cutId, 'big.wav', toneWav(60))).status).toBe(201);
      expect((await upload(api, far.token, far.cutId, 'small.wav', toneWav(1))).status).toBe(201);
      expect(total((await families(server)).get('bandcollab_users_near_quota'))).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('refuses a METRICS_TOKEN shorter than 32 characters at start', async () => {
    await expect(startTestServer({ METRICS_TOKEN: 'short' })).rejects.toThrow(/METRICS_TOKEN must be at least 32 characters/);
  });
});

describe('what a scrape holds', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let owner: Awaited<ReturnType<typeof userWithCut>>;
  beforeAll(async () => {
    server = await startTestServer({ METRICS_TOKEN, LOGIN_MAX_FAILURES: '2' });
    api = client(server.url);
    owner = await userWithCut(api);
  });
  afterAll(() => server?.close());

  it('has every documented family with its labels, and counters that move with the actions that feed them', async () => {
    // What feeds them, before the first scrape (jobs and stored totals are then read, and kept 30 s).
    const wav = toneWav(1);
    const uploaded = await upload(api, owner.token, owner.cutId, 'mix.wav', wav);
    expect(uploaded.status).toBe(201);
    expect((await analysed(api, owner.token, uploaded.body.id)).analysis).toBe('done');
    expect((await previewed(api, owner.token, uploaded.body.id)).preview.status).toBe('done');
    const created = await api.request('POST', '/api/uploads', {
      token: owner.token,
      headers: { ...TUS, 'upload-length': String(wav.length), 'upload-metadata': `cutId ${Buffer.from(owner.cutId).toString('base64')},filename ${Buffer.from('take.wav').toString('base64')}` },
    });
    expect(created.status).toBe(201);
    const patched = await api.request('PATCH', created.headers.get('location')!, {
      token: owner.token,
      headers: { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
      body: new Uint8Array(wav),
    });
    expect(patched.status).toBe(204);
    const email = owner.user.user.email;
    for (let attempt = 0; attempt < 3; attempt += 1) await api.request('POST', '/api/auth/login', { json: { email, password: 'not-the-password' } });

    const all = await families(server);
    for (const [name, labels] of Object.entries(FAMILIES)) {
      const family = all.get(name);
      expect(family, name).toBeDefined();
      for (const sample of family!.metrics) expect(Object.keys(sample.labels ?? {}).filter((label) => label !== 'le' && label !== 'quantile').sort(), name).toEqual([...labels].sort());
    }
    const duration = all.get('http_server_request_duration_seconds');
    expect(duration!.type).toBe('HISTOGRAM');
    expect(total(duration, { http_request_method: 'POST', http_route: '/api/files/upload', http_response_status_code: '201' })).toBe(1);
    expect(total(duration, { http_request_method: 'PATCH', http_route: '/api/uploads/:id', http_response_status_code: '204' })).toBe(1);
    expect(total(all.get('http_server_request_body_size_bytes_total'), { http_request_method: 'PATCH', http_route: '/api/uploads/:id' })).toBe(wav.length);
    expect(total(all.get('http_server_response_body_size_bytes_total'), { http_request_method: 'POST', http_route: '/api/files/upload' })).toBeGreaterThan(100);
    // The scrape itself is the one request under way.
    expect(total(all.get('http_server_active_requests'), { http_request_method: 'GET' })).toBe(1);
    expect(total(all.get('bandcollab_uploads_started_total'), { protocol: 'multipart' })).toBe(1);
    expect(total(all.get('bandcollab_uploads_completed_total'), { protocol: 'multipart' })).toBe(1);
    expect(total(all.get('bandcollab_uploads_started_total'), { protocol: 'tus' })).toBe(1);
    expect(total(all.get('bandcollab_uploads_completed_total'), { protocol: 'tus' })).toBe(1);
    expect(total(all.get('bandcollab_upload_received_bytes_total'), { protocol: 'tus' })).toBe(wav.length);
    expect(total(all.get('bandcollab_upload_received_bytes_total'), { protocol: 'multipart' })).toBe(wav.length);
    expect(total(all.get('bandcollab_upload_duration_seconds'), { protocol: 'tus' })).toBe(1);
    expect(total(all.get('bandcollab_store_operation_duration_seconds'), { operation: 'write' })).toBeGreaterThanOrEqual(1);
    expect(total(all.get('bandcollab_analysis_duration_seconds'), { outcome: 'done' })).toBeGreaterThanOrEqual(1);
    expect(total(all.get('bandcollab_preview_duration_seconds'), { outcome: 'done' })).toBeGreaterThanOrEqual(1);
    // Two wrong passwords are counted failures; the third is refused by the limit before any check.
    expect(total(all.get('bandcollab_login_failures_total'))).toBe(2);
    expect(total(all.get('bandcollab_rate_limited_total'), { http_route: '/api/auth/login' })).toBe(1);
    expect(total(all.get('bandcollab_jobs'), { kind: 'analysis', state: 'done' })).toBeGreaterThanOrEqual(1);
    expect(total(all.get('bandcollab_stored_files'), { type: 'CUT' })).toBe(2);
    expect(total(all.get('bandcollab_stored_bytes'), { type: 'CUT' })).toBe(2 * wav.length);
    expect(total(all.get('bandcollab_connections_open'))).toBeGreaterThanOrEqual(1);
    expect(total(all.get('bandcollab_websockets_open'))).toBe(0);
    expect(total(all.get('bandcollab_disk_free_bytes'))).toBeGreaterThan(0);
    expect(total(all.get('bandcollab_disk_size_bytes'))).toBeGreaterThanOrEqual(total(all.get('bandcollab_disk_free_bytes')));
    // No USER_QUOTA_MB: no such family.
    expect(all.has('bandcollab_users_near_quota')).toBe(false);
  });

  it('labels requests by their route template: 2,000 distinct file ids add no series, and a scrape stays under 2,000 series', async () => {
    await api.request('GET', `/api/files/${randomUUID()}`, { token: owner.token });
    await api.request('GET', '/no/such/path', { token: owner.token });
    const before = httpSeries(await families(server));
    for (let batch = 0; batch < 20; batch += 1) {
      await Promise.all(Array.from({ length: 100 }, () => api.request('GET', `/api/files/${randomUUID()}`, { token: owner.token })));
    }
    await api.request('GET', `/no/such/${randomUUID()}`, { token: owner.token });
    const after = await families(server);
    expect(httpSeries(after)).toEqual(before);
    expect(total(after.get('http_server_request_duration_seconds'), { http_route: '/api/files/:id', http_response_status_code: '404' })).toBe(2001);
    // A path no route answers is one series, route ''.
    expect(total(after.get('http_server_request_duration_seconds'), { http_route: '', http_response_status_code: '404' })).toBe(2);
    const text = (await scrape(server.url, { authorization: `Bearer ${METRICS_TOKEN}` })).text;
    expect(seriesCount(text)).toBeLessThan(2000);
    expect(text).not.toMatch(/\/api\/files\/[0-9a-f]{8}-/);
  });
});
