import 'reflect-metadata';
import { once } from 'node:events';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { App, type Request, type Response } from '@tinyhttp/app';
import { ROUTES } from '@bandcollab/sdk/contract';
import { cors } from '@tinyhttp/cors';
import postgres from 'postgres';
import type { InjectionToken } from 'tsyringe';
import { AccountsRoutes } from './accounts/routes.js';
import { AdminRoutes } from './admin/routes.js';
import { ArchivesRoutes } from './archives/routes.js';
import { AnalysisJobs } from './analysis/worker.js';
import { PreviewJobs } from './previews/jobs.js';
import { AuthRoutes } from './auth/routes.js';
import { compose } from './composition.js';
import { type Clock, systemClock } from './core/clock.js';
import type { Config } from './core/config.js';
import { createHttpServer } from './core/connections.js';
import { type Database, openDatabase } from './core/database.js';
import { AuthGuard } from './core/auth-guard.js';
import { JOB_KINDS } from './core/job-kinds.js';
import { JobQueue } from './core/jobs.js';
import { Routes } from './core/routes.js';
import { CLOCK } from './core/di.js';
import { DomainError, unavailable } from './core/errors.js';
import type { Feature } from './core/feature.js';
import { requestId, sendProblem, setCommonHeaders } from './core/http.js';
import { type CorsHandler, requestListener } from './core/listener.js';
import { Logger } from './core/logger.js';
import { UrlRedactor } from './core/redact.js';
import { declaredRoutes, RouteTable, routeExactly } from './core/routing.js';
import { Idempotency } from './core/idempotency.js';
import { loadOrCreateSecret } from './core/secrets.js';
import { Shutdown } from './core/shutdown.js';
import { type BlobStore, openBlobStore } from './core/store/index.js';
import { measureStore } from './core/store/measured.js';
import { Metrics } from './core/metrics.js';
import { CommentsRoutes } from './comments/routes.js';
import { CutsRoutes } from './cuts/routes.js';
import { EventsRoutes } from './events/routes.js';
import { FilesRoutes } from './files/routes.js';
import { IdpRoutes } from './auth/idp-routes.js';
import { InvitationsRoutes } from './invitations/routes.js';
import { OrphansWarning } from './operations/orphans.js';
import { ExpiredRowsPurge } from './operations/purge.js';
import { MetricsRoutes } from './operations/metrics-routes.js';
import { OperationsRoutes } from './operations/routes.js';
import { ProjectsRoutes } from './projects/routes.js';
import { FileTypes } from './core/file-types.js';
import { FeedbackRoutes } from './shares/feedback-routes.js';
import { SharesRoutes } from './shares/routes.js';
import { StorageRoutes } from './storage/routes.js';
import { TokensRoutes } from './tokens/routes.js';
import { TUS_REQUEST_HEADERS, TUS_RESPONSE_HEADERS, tusDiscoveryHeaders, UploadsRoutes } from './uploads/routes.js';
import { VibesRoutes } from './vibes/routes.js';
import { WebhookDeliverer } from './webhooks/delivery.js';
import { TrashRoutes } from './trash/routes.js';
import { TrashService } from './trash/service.js';
import { Mailer } from './email/mailer.js';
import { PASSWORD_RESET_KIND, PasswordResets } from './auth/password-reset.js';
import { WebhooksRoutes } from './webhooks/routes.js';
import { NotificationsRoutes } from './notifications/routes.js';
import { Digests } from './notifications/digest.js';

export interface RunningServer {
  url: string;
  /** The settings in effect: those given, with the port that PORT=0 chose in PORT, PUBLIC_URL and APP_URL. */
  config: Config;
  /** Its routes are listed by the tests that check every route is documented. */
  app: App;
  /** No account existed when it started: the ready line says to register the first (its site ADMIN). */
  noAccounts: boolean;
  /**
   * Stops taking requests, lets those in flight finish within the grace period (SHUTDOWN_GRACE_SECONDS), then
   * cuts uploads still running (503, partial file removed) and closes the rest, stops features, closes the
   * database. Called again while closing, it ends the grace period at once (a second Ctrl-C).
   */
  close(): Promise<void>;
}

export interface ServerHooks {
  /** The embedded database died and could not be restarted: the server cannot serve any more. */
  onDatabaseLost?: (error: Error) => void;
  /** What access tokens are signed and checked against; the system clock unless a test moves its own. */
  clock?: Clock;
}

/** After the cut, how long answers get to reach clients that are still sending before their connections close. */
const CUT_ANSWER_MS = 1000;

/**
 * Registration order matters where paths overlap: a fixed path comes before the `/:id` route that would
 * take it for an id (`/api/vibes/reorder` inside VibesRoutes; StorageRoutes' `/api/files/storage` before FilesRoutes).
 */
const FEATURES: InjectionToken<Feature>[] = [
  OperationsRoutes,
  AuthRoutes,
  AccountsRoutes,
  NotificationsRoutes,
  IdpRoutes,
  ProjectsRoutes,
  InvitationsRoutes,
  VibesRoutes,
  CutsRoutes,
  ArchivesRoutes,
  CommentsRoutes,
  StorageRoutes,
  FilesRoutes,
  TokensRoutes,
  UploadsRoutes,
  SharesRoutes,
  FeedbackRoutes,
  EventsRoutes,
  AdminRoutes,
  WebhooksRoutes,
  TrashRoutes,
  MetricsRoutes,
];

/** Starts the server: binds its socket, then builds every piece once from the composition root (composition.ts). */
export async function startServer(given: Config, hooks: ServerHooks = {}): Promise<RunningServer> {
  const log = new Logger(given.logLevel);
  // The socket is bound first, so PORT=0 has its port before anything that names it is built (the default
  // PUBLIC_URL and APP_URL, http://localhost:0, are whole from the start and never change after), and no
  // probed port can be taken by someone else in between. Until the app is wired, requests get a 503.
  let serve: (req: IncomingMessage, res: ServerResponse) => void = answerStarting;
  const server = createHttpServer(given, log, (req, res) => serve(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(given.port, given.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const config = withPort(given, (server.address() as AddressInfo).port);
  let built: Built;
  try {
    built = await build(config, log, server, hooks);
  } catch (error) {
    server.close();
    server.closeAllConnections();
    throw error;
  }
  const { app, listener, database, shutdown, features, jobs, analysis, previews, orphans, store } = built;
  serve = listener;
  const [{ noAccounts }] = await database.sql<[{ noAccounts: boolean }]>`select not exists (select 1 from users) as no_accounts`;
  // Ready now: the count of stored files without a record runs behind, never delaying the start (nor the ready line).
  orphans.start();
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${config.port}`,
    config,
    app,
    noAccounts,
    close() {
      if (closing) {
        shutdown.cut();
        return closing;
      }
      closing = (async () => {
        const drained = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Before the drain: upgraded (WebSocket) connections never end by themselves and would hold it open.
        for (const feature of features.reverse()) await feature.stop?.();
        // A job in progress is abandoned (queued again at once for another instance or the next start), not waited for.
        await jobs.stop();
        await analysis.close();
        await previews.close();
        // A keep-alive connection turns idle only when its last response ends; until closed it holds the drain open.
        const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
        const graceOver = AbortSignal.timeout(config.shutdownGraceSeconds * 1000);
        await Promise.race([drained, once(graceOver, 'abort'), once(shutdown.signal, 'abort')]);
        shutdown.cut();
        // Cut uploads answer 503 once their partial files are gone; the answers get a moment to reach clients.
        await shutdown.settled();
        await Promise.race([drained, delay(CUT_ANSWER_MS)]);
        server.closeAllConnections();
        await drained;
        clearInterval(idleSweep);
        await orphans.stop();
        await database.close();
        store.close();
      })();
      return closing;
    },
  };
}

interface Built {
  app: App;
  /** What the HTTP server's requests go to once the server is built (core/listener.ts, then the app). */
  listener: RequestListener;
  database: Database;
  shutdown: Shutdown;
  features: Feature[];
  jobs: JobQueue;
  analysis: AnalysisJobs;
  previews: PreviewJobs;
  orphans: OrphansWarning;
  store: BlobStore & { close(): void };
}

/** Opens the database and builds every piece once, serving on `server`. */
async function build(config: Config, log: Logger, server: Server, hooks: ServerHooks): Promise<Built> {
  const database = await openDatabase(config, log, {
    kind: 'server',
    onLost: (error) => (hooks.onDatabaseLost ? hooks.onDatabaseLost(error) : log.error('the database is lost', { error })),
  });
  const store = await openBlobStore(config).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  const signingSecret = config.jwtSecret ?? (await loadOrCreateSecret(config.dataDir, 'jwt-secret'));
  const container = compose({ config, log, database, store, signingSecret, clock: hooks.clock ?? systemClock });
  const shutdown = container.resolve(Shutdown);
  const metrics = container.resolve(Metrics);
  measureStore(store, metrics);

  const app = new App({
    settings: { xPoweredBy: false },
    noMatchHandler: (req: Request, res: Response) => sendProblem(req, res, noRoute(req)),
    onError: (error: unknown, req: Request, res: Response) => handleError(log, urls, error, req, res),
  });
  const features = FEATURES.map((token) => container.resolve(token));
  const routes = new Routes(app, container.resolve(AuthGuard), container.resolve(Idempotency));
  for (const feature of features) feature.register(routes);
  routeExactly(app);
  // Used by the handlers above, which run only once the server is built (requests wait for that).
  const urls = new UrlRedactor(declaredRoutes(app));
  const listener = requestListener({
    log,
    urls,
    routes: new RouteTable(declaredRoutes(app)),
    cors: config.corsOrigins.length > 0 ? corsFor(config.corsOrigins, tusDiscoveryHeaders(container.resolve(FileTypes))) : undefined,
    metrics: config.metrics.token !== null || config.metrics.loopback ? metrics : undefined,
    dispatch: (req, res) => app.attach(req as Request, res as Response),
  });

  for (const feature of features) await feature.start?.(server);
  const purge = container.resolve(ExpiredRowsPurge);
  await purge.atStart();
  const analysis = container.resolve(AnalysisJobs);
  const jobs = new JobQueue({ sql: database.sql, locks: database.locks, log, clock: container.resolve(CLOCK) });
  const concurrency = config.jobsConcurrency;
  jobs.register(JOB_KINDS.analysis, analysis.run, { concurrency: concurrency.analysis });
  const previews = container.resolve(PreviewJobs);
  jobs.register(JOB_KINDS.preview, previews.run, { concurrency: concurrency.preview });
  jobs.register(JOB_KINDS.expired_rows_purge, purge.purgeRows, { concurrency: concurrency.expired_rows_purge });
  jobs.register(JOB_KINDS.upload_purge, purge.purgeUploads, { concurrency: concurrency.upload_purge });
  jobs.register(JOB_KINDS.webhook_delivery, container.resolve(WebhookDeliverer).run, { concurrency: concurrency.webhook_delivery });
  jobs.register(JOB_KINDS.trash_purge, container.resolve(TrashService).purgeDue, { concurrency: concurrency.trash_purge });
  const mailer = container.resolve(Mailer);
  mailer.composeWith(PASSWORD_RESET_KIND, container.resolve(PasswordResets).compose);
  jobs.register(JOB_KINDS.email, mailer.run, { concurrency: concurrency.email });
  jobs.register(JOB_KINDS.digest, container.resolve(Digests).run, { concurrency: concurrency.digest });
  jobs.every(JOB_KINDS.digest, config.digestCheckSeconds);
  jobs.every(JOB_KINDS.expired_rows_purge, config.purgeIntervalSeconds);
  jobs.every(JOB_KINDS.trash_purge, config.purgeIntervalSeconds);
  jobs.every(JOB_KINDS.upload_purge, config.purgeIntervalSeconds);
  await jobs.start();
  return { app, listener, database, shutdown, features, jobs, analysis, previews, orphans: container.resolve(OrphansWarning), store };
}

/** CORS for CORS_ORIGINS: its preflight answers every OPTIONS, the tus discovery's with that answer's headers. */
function corsFor(origins: string[], discovery: Record<string, string>): CorsHandler {
  const handler = cors({
    origin: origins,
    credentials: true,
    allowedHeaders: ['authorization', 'content-type', 'range', 'if-none-match', 'x-request-id', 'idempotency-key', ...TUS_REQUEST_HEADERS],
    exposedHeaders: ['content-disposition', 'content-range', 'etag', 'location', 'retry-after', 'x-request-id', 'idempotent-replayed', ...TUS_RESPONSE_HEADERS],
  });
  return (req, res, next) => {
    if (req.method === 'OPTIONS' && req.url?.split('?')[0] === ROUTES.tusOptions.path) for (const [name, value] of Object.entries(discovery)) res.setHeader(name, value);
    handler(req, res, next);
  };
}

/** The answer while the server is still being built: come back in a moment. */
function answerStarting(req: IncomingMessage, res: ServerResponse): void {
  setCommonHeaders(req, res);
  sendProblem(req, res, unavailable('The server is starting', 1));
}

function handleError(log: Logger, urls: UrlRedactor, error: unknown, req: IncomingMessage, res: ServerResponse): void {
  if (isHangUp(error)) {
    // Nobody is left to answer; the request log notes it at info when the connection closes.
    res.destroy();
    return;
  }
  if (res.headersSent) {
    log.error('error after the response started', { reqId: requestId(req), error });
    res.destroy();
    return;
  }
  if (error instanceof DomainError) {
    sendProblem(req, res, error);
    return;
  }
  if (isDatabaseUnreachable(error)) {
    log.error('database unreachable', { reqId: requestId(req), error });
    sendProblem(req, res, unavailable('The service is temporarily unavailable'));
    return;
  }
  log.error('unhandled error', { reqId: requestId(req), method: req.method, url: urls.redact(req.method ?? '', req.url ?? ''), error });
  sendProblem(req, res, new DomainError('INTERNAL', `Something went wrong on our side (request ${requestId(req)})`));
}

const noRoute = (req: IncomingMessage): DomainError => new DomainError('NOT_FOUND', `No route for ${req.method} ${req.url?.split('?')[0]}`);

/** `config` listening on `port`: URLs that name port 0 name `port` instead. */
function withPort(config: Config, port: number): Config {
  const withBoundPort = (url: string): string => {
    const parsed = new URL(url);
    if (parsed.port !== '0') return url;
    parsed.port = String(port);
    return parsed.href.replace(/\/+$/, '');
  };
  return { ...config, port, publicUrl: withBoundPort(config.publicUrl), appUrl: withBoundPort(config.appUrl) };
}

/** Failures postgres.js names itself: no socket or server error carries these codes. */
const POSTGRES_JS_CODES = new Set(['CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED']);

/**
 * Whether an error came from the database client. postgres.js marks every error it rejects a query with (its
 * `query` and `parameters`), raises PostgresError for what the server reports, and names its own connection
 * failures; anything else carrying a socket code (ECONNRESET…) came from the client's connection.
 */
function isFromDatabase(error: unknown): boolean {
  if (error instanceof postgres.PostgresError) return true;
  if (typeof error !== 'object' || error === null) return false;
  return ('query' in error && 'parameters' in error) || POSTGRES_JS_CODES.has(String((error as { code?: unknown }).code));
}

// EPIPE: a query written to a connection whose database had just been killed (seen in lifecycle.test.ts as a 500).
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', ...POSTGRES_JS_CODES, '57P01', '57P03']);

function isDatabaseUnreachable(error: unknown): boolean {
  return isFromDatabase(error) && UNREACHABLE_CODES.has(String((error as { code?: unknown }).code));
}

/**
 * The client's connection broke (reset, abort, broken pipe) while its request was read or answered. Node 24
 * reports a write to a socket the client already closed as ECANCELED (a browser leaving a share page).
 */
const HANG_UP_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'ECANCELED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

export function isHangUp(error: unknown): boolean {
  return !isFromDatabase(error) && HANG_UP_CODES.has(String((error as { code?: unknown } | null)?.code));
}
