import 'reflect-metadata';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, type Request, type Response } from '@tinyhttp/app';
import { cors } from '@tinyhttp/cors';
import { container as rootContainer, type InjectionToken } from 'tsyringe';
import { AuthRoutes } from './auth/routes.js';
import type { Config } from './core/config.js';
import { openDatabase } from './core/database.js';
import { CONFIG, LOGGER, SIGNING_SECRET, SQL } from './core/di.js';
import { ApiError, notFound, unavailable } from './core/errors.js';
import type { Feature } from './core/feature.js';
import { requestId, sendProblem } from './core/http.js';
import { Logger } from './core/logger.js';
import { loadOrCreateSecret } from './core/secrets.js';
import { CutsRoutes } from './cuts/routes.js';
import { EventsRoutes } from './events/routes.js';
import { FilesRoutes } from './files/routes.js';
import { IdpRoutes } from './auth/idp-routes.js';
import { OperationsRoutes } from './operations/routes.js';
import { ProjectsRoutes } from './projects/routes.js';
import { Space } from './core/space.js';
import { SharesRoutes } from './shares/routes.js';
import { StorageRoutes } from './storage/routes.js';
import { VibesRoutes } from './vibes/routes.js';

export interface RunningServer {
  url: string;
  /** Its routes are listed by the tests that check every route is documented. */
  app: App;
  /** Stops taking requests, drains those in flight, stops features, closes the database. */
  close(): Promise<void>;
}

/**
 * Registration order matters where paths overlap: a fixed path comes before the `/:id` route that would
 * take it for an id (`/api/vibes/reorder` inside VibesRoutes; StorageRoutes' `/api/files/storage` before FilesRoutes).
 */
const FEATURES: InjectionToken<Feature>[] = [
  OperationsRoutes,
  AuthRoutes,
  IdpRoutes,
  ProjectsRoutes,
  VibesRoutes,
  CutsRoutes,
  StorageRoutes,
  FilesRoutes,
  SharesRoutes,
  EventsRoutes,
];

/** The composition root: builds every piece once and wires them together. */
export async function startServer(config: Config): Promise<RunningServer> {
  const log = new Logger(config.logLevel);
  const database = await openDatabase(config, log);
  const signingSecret = config.jwtSecret ?? (await loadOrCreateSecret(config.dataDir, 'jwt-secret'));

  const container = rootContainer.createChildContainer();
  container.register(CONFIG, { useValue: config });
  container.register(LOGGER, { useValue: log });
  container.register(SQL, { useValue: database.sql });
  container.register(SIGNING_SECRET, { useValue: signingSecret });
  // One per server: the reservations of uploads in flight must be seen by every endpoint that takes uploads.
  container.registerSingleton(Space);

  const app = new App({
    settings: { xPoweredBy: false },
    noMatchHandler: (req: Request, res: Response) => sendProblem(req, res, noRoute(req)),
    onError: (error: unknown, req: Request, res: Response) => handleError(log, error, req, res),
  });
  app.use((req, res, next) => {
    const id = requestId(req);
    res.setHeader('X-Request-Id', id);
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      log.info('request', {
        method: req.method,
        path: req.originalUrl?.split('?')[0] ?? req.url,
        status: res.statusCode,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        requestId: id,
      });
    });
    // tinyhttp answers a path it cannot percent-decode with a plain-text 400; such a path names nothing.
    if (!isDecodable(req.url)) {
      sendProblem(req, res, notFound());
      return;
    }
    // tinyhttp runs HEAD through the first route of the path whatever its method (a HEAD of
    // /api/auth/logout would log out): only a GET route may answer it.
    if (req.method === 'HEAD' && firstRouteOf(app, req.url)?.method !== 'GET') {
      sendProblem(req, res, noRoute(req));
      return;
    }
    next?.();
  });

  if (config.corsOrigins.length > 0) {
    app.use(
      cors({
        origin: config.corsOrigins,
        credentials: true,
        allowedHeaders: ['authorization', 'content-type', 'range', 'if-none-match', 'x-request-id'],
        exposedHeaders: ['content-disposition', 'content-range', 'etag', 'location', 'retry-after', 'x-request-id'],
      }),
    );
  }

  const features = FEATURES.map((token) => container.resolve(token));
  for (const feature of features) feature.register(app);

  const server = createServer({ requestTimeout: 0 }, (req, res) => app.attach(req as Request, res as Response));
  for (const feature of features) await feature.start?.(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  // PORT=0 binds a free port; the default PUBLIC_URL (and APP_URL), http://localhost:0, means that port.
  config.publicUrl = withBoundPort(config.publicUrl, port);
  config.appUrl = withBoundPort(config.appUrl, port);
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${port}`,
    app,
    close() {
      closing ??= (async () => {
        const drained = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Before the drain: upgraded (WebSocket) connections never end by themselves and would hold it open.
        for (const feature of features.reverse()) await feature.stop?.();
        const timer = setTimeout(() => server.closeAllConnections(), 10_000);
        // A keep-alive connection turns idle only when its last response ends; until closed it holds the drain open.
        const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
        await drained;
        clearTimeout(timer);
        clearInterval(idleSweep);
        await database.close();
      })();
      return closing;
    },
  };
}

function handleError(log: Logger, error: unknown, req: IncomingMessage, res: ServerResponse): void {
  if (res.headersSent) {
    log.error('error after the response started', { requestId: requestId(req), error });
    res.destroy();
    return;
  }
  if (error instanceof ApiError) {
    sendProblem(req, res, error);
    return;
  }
  if (isDatabaseUnreachable(error)) {
    log.error('database unreachable', { requestId: requestId(req), error });
    sendProblem(req, res, unavailable('The service is temporarily unavailable'));
    return;
  }
  log.error('unhandled error', { requestId: requestId(req), method: req.method, url: req.url, error });
  sendProblem(req, res, new ApiError(500, 'INTERNAL', `Something went wrong on our side (request ${requestId(req)})`));
}

const noRoute = (req: IncomingMessage): ApiError => new ApiError(404, 'NOT_FOUND', `No route for ${req.method} ${req.url?.split('?')[0]}`);

function firstRouteOf(app: App, url: string) {
  const path = url.split('?')[0]!;
  return app.middleware.find((route) => route.type === 'route' && route.regex?.pattern.test(path));
}

function withBoundPort(url: string, port: number): string {
  const parsed = new URL(url);
  if (parsed.port !== '0') return url;
  parsed.port = String(port);
  return parsed.href.replace(/\/+$/, '');
}

function isDecodable(url: string): boolean {
  try {
    decodeURIComponent(url.split('?')[0]!);
    return true;
  } catch {
    return false;
  }
}

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', '57P01', '57P03']);

function isDatabaseUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNREACHABLE_CODES.has(code);
}
