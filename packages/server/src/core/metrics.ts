// The server's Prometheus metrics (GET /metrics, operations/metrics-routes.ts), through prom-client, one registry
// per server (tests run several in one process). Names follow OpenTelemetry's HTTP server conventions for the
// requests, `bandcollab_*` for the rest. Every label takes values from a fixed set (a route template, never a
// path; a kind, an outcome, a status code): the series stay bounded whatever the number of users, projects or
// files. Figures that would take a query (jobs, stored bytes) are read at most once per CACHE_SECONDS.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** OpenTelemetry's advised boundaries for http.server.request.duration, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** Store operations, analyses and uploads run longer than requests. */
const LONG_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800];
/** How long a figure read from the database is reused: a scrape every few seconds costs no query each. */
export const CACHE_SECONDS = 30;

export type UploadProtocol = 'multipart' | 'tus';

/** What a scrape reads from the database, at most once per CACHE_SECONDS. */
export interface MetricsSources {
  /** Jobs by kind and state, and the age of the oldest queued job of each kind. */
  jobs(): Promise<Array<{ kind: string; state: string; count: number; oldestQueuedSeconds: number | null }>>;
  /** Stored files' bytes and counts by type (the storage report's totals). */
  stored(): Promise<Array<{ type: string; bytes: number; count: number }>>;
  /** Accounts whose stored bytes reach 90 % of USER_QUOTA_MB; none without a quota. */
  nearQuota: (() => Promise<number>) | null;
  /** DATA_DIR's file system: its size and the bytes free (the embedded database and, on the local driver, the files). */
  disk(): Promise<{ sizeBytes: number; freeBytes: number }>;
  /** Open connections and WebSocket sockets of this instance. */
  connections(): Promise<number>;
  sockets(): number;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly registers = [this.registry];
  private readonly byRoute = new Map<string, RouteSeries>();

  readonly requestDuration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP server requests, by method, route template and status code',
    labelNames: ['http_request_method', 'http_route', 'http_response_status_code'] as const,
    buckets: DURATION_BUCKETS,
    registers: this.registers,
  });
  readonly activeRequests = new Gauge({
    name: 'http_server_active_requests',
    help: 'HTTP requests being answered now',
    labelNames: ['http_request_method'] as const,
    registers: this.registers,
  });
  readonly requestBodyBytes = new Counter({
    name: 'http_server_request_body_size_bytes_total',
    help: 'Bytes of request bodies received (Content-Length, else the bytes read while the request ran), by method and route template',
    labelNames: ['http_request_method', 'http_route'] as const,
    registers: this.registers,
  });
  readonly responseBodyBytes = new Counter({
    name: 'http_server_response_body_size_bytes_total',
    help: 'Bytes of response bodies sent (Content-Length, else the bytes written), by method and route template',
    labelNames: ['http_request_method', 'http_route'] as const,
    registers: this.registers,
  });
  readonly rateLimited = new Counter({
    name: 'bandcollab_rate_limited_total',
    help: 'Answers 429 RATE_LIMITED, by the route template whose limit refused',
    labelNames: ['http_route'] as const,
    registers: this.registers,
  });
  readonly loginFailures = new Counter({
    name: 'bandcollab_login_failures_total',
    help: 'Password logins refused for a wrong email or password',
    registers: this.registers,
  });
  readonly uploadsStarted = new Counter({
    name: 'bandcollab_uploads_started_total',
    help: 'Uploads begun: multipart requests, and resumable (tus) uploads created',
    labelNames: ['protocol'] as const,
    registers: this.registers,
  });
  readonly uploadsCompleted = new Counter({
    name: 'bandcollab_uploads_completed_total',
    help: 'Uploads that became a file',
    labelNames: ['protocol'] as const,
    registers: this.registers,
  });
  readonly uploadsFailed = new Counter({
    name: 'bandcollab_uploads_failed_total',
    help: 'Upload requests refused or cut before their file was stored (a resumable upload may resume after)',
    labelNames: ['protocol'] as const,
    registers: this.registers,
  });
  readonly uploadsTerminated = new Counter({
    name: 'bandcollab_uploads_terminated_total',
    help: 'Resumable uploads terminated by their creator (tus DELETE)',
    registers: this.registers,
  });
  readonly uploadBytes = new Counter({
    name: 'bandcollab_upload_received_bytes_total',
    help: 'Bytes of uploads received and kept',
    labelNames: ['protocol'] as const,
    registers: this.registers,
  });
  readonly uploadDuration = new Histogram({
    name: 'bandcollab_upload_duration_seconds',
    help: 'From the start of an upload (a resumable one: its creation) to its file',
    labelNames: ['protocol'] as const,
    buckets: LONG_BUCKETS,
    registers: this.registers,
  });
  readonly storeDuration = new Histogram({
    name: 'bandcollab_store_operation_duration_seconds',
    help: 'Operations on the blob store (local directory or S3), by operation',
    labelNames: ['operation'] as const,
    buckets: LONG_BUCKETS,
    registers: this.registers,
  });
  readonly storeErrors = new Counter({
    name: 'bandcollab_store_operation_errors_total',
    help: 'Operations on the blob store that failed (a missing object included), by operation',
    labelNames: ['operation'] as const,
    registers: this.registers,
  });
  readonly webhookDeliveries = new Counter({
    name: 'bandcollab_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome (succeeded, retry, failed, disable)',
    labelNames: ['outcome'] as const,
    registers: this.registers,
  });
  readonly emails = new Counter({
    name: 'bandcollab_emails_total',
    help: 'Emails handed to the SMTP server, by outcome (sent, failed)',
    labelNames: ['outcome'] as const,
    registers: this.registers,
  });
  readonly analysisDuration = new Histogram({
    name: 'bandcollab_analysis_duration_seconds',
    help: "Audio analyses, by their file's outcome (done, failed, unsupported)",
    labelNames: ['outcome'] as const,
    buckets: LONG_BUCKETS,
    registers: this.registers,
  });
  readonly previewDuration = new Histogram({
    name: 'bandcollab_preview_duration_seconds',
    help: 'Previews made, by outcome (done, failed)',
    labelNames: ['outcome'] as const,
    buckets: LONG_BUCKETS,
    registers: this.registers,
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The gauges read from the instance and, cached, from the database. */
  observe(sources: MetricsSources): void {
    const registers = this.registers;
    const jobs = cached(() => sources.jobs());
    const stored = cached(() => sources.stored());
    new Gauge({
      name: 'bandcollab_connections_open',
      help: 'Open connections of this instance (WebSockets included)',
      registers,
      async collect() {
        this.set(await sources.connections());
      },
    });
    new Gauge({
      name: 'bandcollab_websockets_open',
      help: 'Open WebSocket sockets of this instance (GET /api/events)',
      registers,
      collect() {
        this.set(sources.sockets());
      },
    });
    new Gauge({
      name: 'bandcollab_jobs',
      help: `Jobs by kind and state (read at most every ${CACHE_SECONDS} s)`,
      labelNames: ['kind', 'state'] as const,
      registers,
      async collect() {
        this.reset();
        for (const row of await jobs()) this.set({ kind: row.kind, state: row.state }, row.count);
      },
    });
    new Gauge({
      name: 'bandcollab_jobs_oldest_queued_age_seconds',
      help: `Age of the oldest job of each kind waiting to run, its run time come (read at most every ${CACHE_SECONDS} s)`,
      labelNames: ['kind'] as const,
      registers,
      async collect() {
        this.reset();
        for (const row of await jobs()) if (row.oldestQueuedSeconds !== null) this.set({ kind: row.kind }, row.oldestQueuedSeconds);
      },
    });
    new Gauge({
      name: 'bandcollab_stored_bytes',
      help: `Bytes of stored files by type, as the storage report counts them (read at most every ${CACHE_SECONDS} s)`,
      labelNames: ['type'] as const,
      registers,
      async collect() {
        this.reset();
        for (const row of await stored()) this.set({ type: row.type }, row.bytes);
      },
    });
    if (sources.nearQuota) {
      const nearQuota = cached(sources.nearQuota);
      new Gauge({
        name: 'bandcollab_users_near_quota',
        help: `Accounts whose stored bytes reach 90 % of USER_QUOTA_MB; absent without a quota (read at most every ${CACHE_SECONDS} s)`,
        registers,
        async collect() {
          this.set(await nearQuota());
        },
      });
    }
    new Gauge({
      name: 'bandcollab_disk_free_bytes',
      help: "Free bytes of DATA_DIR's file system",
      registers,
      async collect() {
        this.set((await sources.disk()).freeBytes);
      },
    });
    new Gauge({
      name: 'bandcollab_disk_size_bytes',
      help: "Size of DATA_DIR's file system",
      registers,
      async collect() {
        this.set((await sources.disk()).sizeBytes);
      },
    });
    new Gauge({
      name: 'bandcollab_stored_files',
      help: `Stored files by type (read at most every ${CACHE_SECONDS} s)`,
      labelNames: ['type'] as const,
      registers,
      async collect() {
        this.reset();
        for (const row of await stored()) this.set({ type: row.type }, row.count);
      },
    });
  }

  /**
   * Times the request and counts its bytes when its answer is done (finished, or closed unfinished: a
   * client that went away is still a request). `route` is the template that answers it, '' for none.
   */
  track(req: IncomingMessage, res: ServerResponse, route: string): void {
    const started = process.hrtime.bigint();
    const socket = req.socket;
    const readBefore = socket.bytesRead;
    const writtenBefore = socket.bytesWritten;
    const series = this.seriesOf(req.method ?? '', route);
    series.active.inc();
    res.once('close', () => {
      series.active.dec();
      series.durationOf(res.statusCode).observe(Number(process.hrtime.bigint() - started) / 1e9);
      // A body that came whole is its Content-Length; a chunked or cut one the bytes the socket read meanwhile
      // (the parser may have read a small body with the headers, before this listener ran).
      const declared = Number(req.headers['content-length']);
      series.requestBytes.inc(Number.isFinite(declared) && req.complete ? declared : Math.max(0, socket.bytesRead - readBefore));
      const length = Number(res.getHeader('content-length'));
      series.responseBytes.inc(Number.isFinite(length) && res.writableFinished ? length : Math.max(0, socket.bytesWritten - writtenBefore));
      if (res.statusCode === 429) this.rateLimited.inc({ http_route: route });
    });
  }

  /**
   * The series of a method and route, made once: prom-client hashes a label set at every call, which cost a
   * request here several microseconds (the bench's "metrics on vs off"); its children skip that.
   */
  private seriesOf(method: string, route: string): RouteSeries {
    const key = `${method} ${route}`;
    let series = this.byRoute.get(key);
    if (!series) {
      const durations = new Map<number, ReturnType<Metrics['requestDuration']['labels']>>();
      const labels = { http_request_method: method, http_route: route };
      series = {
        active: this.activeRequests.labels({ http_request_method: method }),
        requestBytes: this.requestBodyBytes.labels(labels),
        responseBytes: this.responseBodyBytes.labels(labels),
        durationOf: (status) => {
          let duration = durations.get(status);
          if (!duration) {
            duration = this.requestDuration.labels({ ...labels, http_response_status_code: String(status) });
            durations.set(status, duration);
          }
          return duration;
        },
      };
      this.byRoute.set(key, series);
    }
    return series;
  }
}

/** The children of one method and route template's HTTP series. */
interface RouteSeries {
  active: ReturnType<Metrics['activeRequests']['labels']>;
  requestBytes: ReturnType<Metrics['requestBodyBytes']['labels']>;
  responseBytes: ReturnType<Metrics['responseBodyBytes']['labels']>;
  durationOf(status: number): ReturnType<Metrics['requestDuration']['labels']>;
}

/** `read` once, then its answer for CACHE_SECONDS; a failed read is tried again at the next scrape. */
function cached<T>(read: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | null = null;
  return () => {
    if (last === null || Date.now() - last.at > CACHE_SECONDS * 1000) {
      const value = read();
      last = { at: Date.now(), value };
      value.catch(() => (last = null));
    }
    return last.value;
  };
}
