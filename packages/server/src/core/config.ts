import path from 'node:path';
import { MAX_UPLOAD_BYTES } from '@bandcollab/sdk/contract';
import { JOB_KINDS, type JobKindName } from './job-kinds.js';
import type { S3Settings } from './store/s3-store.js';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
}

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  appUrl: string;
  dataDir: string;
  /** Unset: an embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | null;
  /** Unset: generated once and kept in `dataDir`. */
  jwtSecret: string | null;
  cookieSecure: boolean;
  corsOrigins: string[];
  trustProxy: boolean;
  /** GET /metrics: on with a token, or from loopback addresses, or both; off with neither. */
  metrics: { token: string | null; loopback: boolean };
  logLevel: LogLevel;
  oidc: OidcSettings | null;
  /** A request body (or a response its reader no longer takes) that moves no byte for this long is cut. */
  idleTimeoutSeconds: number;
  /** Open connections beyond this are closed as they arrive. */
  maxConnections: number;
  /** Open connections of one client address beyond this are closed as they arrive (not with TRUST_PROXY). */
  maxConnectionsPerAddress: number;
  /** Tunables with production defaults; tests lower them so nothing waits for minutes. */
  accessTokenTtlSeconds: number;
  loginMaxFailures: number;
  loginWindowSeconds: number;
  /** Failed logins per client address over all emails in the login window. */
  loginMaxFailuresPerAddress: number;
  /** Successful logins per account (from any address) in the login window. */
  loginMaxSuccesses: number;
  /** Successful logins per client address over all accounts in the login window. */
  loginMaxSuccessesPerAddress: number;
  registerMaxPerAddress: number;
  registerWindowSeconds: number;
  scryptLogN: number;
  /** Per-type upload limits override (bytes); null keeps the contract's limits. */
  maxAudioBytes: number | null;
  maxStemBytes: number | null;
  maxImageBytes: number | null;
  /** Uploads are refused (507) when they would leave less free space than this on DATA_DIR's file system. */
  minFreeDiskBytes: number;
  /** Each user's uploads (files and images) may hold at most this many bytes; null: no quota. */
  userQuotaBytes: number | null;
  /** How often the events WebSocket pings its peers; a peer that misses one pong is dropped. */
  eventsHeartbeatSeconds: number;
  /** How often expired sessions, codes, invitations, links and old abuse-limit records are deleted. */
  purgeIntervalSeconds: number;
  /** Days a deleted thing stays in the trash (§21); 0: deletes are for good at once. */
  trashRetentionDays: number;
  /** On SIGINT/SIGTERM, how long requests in flight (uploads) get to finish before they are cut. */
  shutdownGraceSeconds: number;
  /** How long a client may take to send a request's headers. */
  headersTimeoutSeconds: number;
  /** Where stored bytes live: under `dataDir`, or in an S3-compatible bucket (`s3`, then set). */
  storage: { driver: 'fs' } | ({ driver: 's3' } & S3Settings);
  /** Jobs of each kind this instance runs at once (./jobs.ts); 0: none (other instances on the database do). */
  jobsConcurrency: Record<JobKindName, number>;
  /** The wall-clock budget of one file's analysis; a file over it is `failed`. */
  analysisTimeoutSeconds: number;
  /** Every audio entry of a STEM ZIP gets a listening preview too (§20), made once its ZIP is analysed. */
  previewStems: boolean;
  webhooks: { allowHttp: boolean; allowPrivate: boolean; timeoutSeconds: number };
  /** Outgoing email (§19); null (off) unless both SMTP_URL and MAIL_FROM are set. */
  mail: { smtpUrl: string; from: string } | null;
  /** The UTC hour (0–23) notification digests go out at (weekly ones on Mondays). */
  digestHour: number;
  /** How often the digest job looks for digests due; they go only within DIGEST_HOUR. */
  digestCheckSeconds: number;
}

const MiB = 1024 * 1024;
const megabytes = (value: number | null): number | null => (value === null ? null : value * MiB);

/** A setting as `loadConfig` reads it and the README's settings tables list it (`pnpm docs:settings`). */
export interface Setting {
  /** The value taken when the variable is unset; without one, `otherwise` says what happens. */
  default?: number | string | boolean;
  /** Markdown: what an unset variable without a fixed default means ('unset', 'from `PUBLIC_URL`'). */
  otherwise?: string;
  /** More variables the same row documents. */
  with?: readonly string[];
  meaning: string;
  /** A tunable with a production default that tests lower: listed in the README's second table. */
  tunable?: true;
}

/** Every setting, in the README's order: the one place its default is stated. */
export const SETTINGS = {
  PORT: { default: 3000, meaning: 'port to listen on' },
  HOST: { default: '127.0.0.1', meaning: 'address to listen on' },
  PUBLIC_URL: {
    otherwise: '`http://localhost:<PORT>`',
    meaning: "the server's public origin; share links start with it; `https` turns on `Secure` cookies",
  },
  APP_URL: { otherwise: '`PUBLIC_URL`', meaning: 'where the identity-provider sign-in returns to' },
  DATA_DIR: { default: './data', meaning: 'files, images, temporary uploads, the embedded database, generated secrets' },
  DATABASE_URL: { otherwise: 'unset', meaning: 'any PostgreSQL ≥ 14; unset starts an embedded PostgreSQL under `DATA_DIR/postgres`' },
  JWT_SECRET: { otherwise: 'generated', meaning: 'at least 32 characters; unset: generated once into `DATA_DIR/jwt-secret` (mode 0600)' },
  COOKIE_SECURE: { otherwise: 'from `PUBLIC_URL`', meaning: 'force `Secure` on the auth cookies' },
  CORS_ORIGINS: {
    otherwise: 'empty',
    meaning:
      'comma-separated extra origins allowed: CORS for browser clients (credentials, ranges and the tus headers of resumable uploads allowed and exposed) and the WebSocket `Origin` check',
  },
  TRUST_PROXY: {
    default: false,
    meaning:
      'take the client address from `X-Forwarded-For` (login and registration limits, the password-hashing share); the cap of connections per address is then off, since every connection comes from the proxy',
  },
  METRICS_TOKEN: {
    otherwise: 'unset',
    meaning: 'at least 32 characters: turns `GET /metrics` on for requests that send `Authorization: Bearer <METRICS_TOKEN>`',
  },
  METRICS_LOOPBACK: {
    default: false,
    meaning:
      'turns `GET /metrics` on, without a token, for requests from 127.0.0.0/8 and ::1 (with `TRUST_PROXY`, the forwarded client address: a same-host proxy does not open it to the world)',
  },
  LOG_LEVEL: { default: 'info', meaning: '`debug`, `info`, `warn`, `error` or `silent`; logs are one JSON object per line' },
  IDLE_TIMEOUT_SECONDS: {
    default: 60,
    meaning: 'a request whose connection moves no byte for this long is cut: a stalled body (its partial upload is removed) or a reader that stopped reading',
  },
  MAX_CONNECTIONS: { default: 2000, meaning: 'open connections at most (WebSockets included); more are closed as they arrive' },
  MAX_CONNECTIONS_PER_ADDRESS: {
    otherwise: 'the smaller of 200 and a tenth of `MAX_CONNECTIONS`',
    meaning: 'open connections of one client address at most (WebSockets included), so one address cannot take every place; more are closed as they arrive; off with `TRUST_PROXY`',
  },
  OIDC_ISSUER: { with: ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'], otherwise: 'unset', meaning: 'external sign-in; off unless all three are set' },
  OIDC_SCOPES: { default: 'openid email profile', meaning: 'the scopes external sign-in asks the identity provider for' },
  MIN_FREE_DISK_MB: {
    default: 1024,
    meaning:
      "uploads (files, project and vibe images) that would leave less free space on `DATA_DIR`'s file system are refused with 507 `INSUFFICIENT_STORAGE`; with `0`, only an upload that does not fit at all is; not with `STORAGE=s3`, whose uploads do not go to that disk",
  },
  USER_QUOTA_MB: {
    otherwise: 'unset',
    meaning: "each user's uploads (files and images they uploaded) may hold at most this much; over it, 507 `QUOTA_EXCEEDED`; unset: no quota",
  },
  STORAGE: { default: 'fs', meaning: '`fs` keeps stored bytes under `DATA_DIR`; `s3` in an S3-compatible bucket (docs/storage.md)' },
  S3_BUCKET: { otherwise: 'unset', meaning: 'the bucket, required with `STORAGE=s3`' },
  S3_REGION: { default: 'us-east-1', meaning: "the bucket's region" },
  S3_ENDPOINT: { otherwise: 'AWS', meaning: 'the endpoint of a non-AWS store (R2, B2, MinIO, Garage)' },
  S3_FORCE_PATH_STYLE: { default: false, meaning: 'address the bucket in the path (`https://host/bucket/key`), as MinIO and most local stores need' },
  S3_PREFIX: { otherwise: 'empty', meaning: 'put before every key (`bandcollab/`), so several servers can share a bucket' },
  S3_ACCESS_KEY_ID: { with: ['S3_SECRET_ACCESS_KEY'], otherwise: "the AWS SDK's default chain", meaning: 'the credentials' },
  S3_PART_SIZE_MB: { default: 8, meaning: 'multipart part size (at least 5); every part but the last has this size, as R2 requires' },
  S3_CHECKSUMS: {
    default: 'when_required',
    meaning: '`when_required` (every S3-compatible store accepts it) or `when_supported` (the AWS SDK\'s default, which corrupts streamed uploads on several non-AWS stores)',
  },
  S3_PRESIGNED_DOWNLOADS: {
    default: false,
    meaning: "answer requests for a stored file's bytes as an attachment, once checked and counted, with a 302 to a presigned GET (valid 300 s) that carries the same headers (inline bytes are sent by the server, with nosniff)",
  },
  JOBS_CONCURRENCY_ANALYSIS: {
    default: 1,
    with: ['ANALYSIS_CONCURRENCY'],
    meaning:
      'audio files this instance analyses at once (0–4), each in a worker thread at the lowest CPU priority, holding no database connection while it runs; `0`: this instance analyses nothing (others on the same database do); `ANALYSIS_CONCURRENCY` is its earlier name, read when it is unset',
  },
  JOBS_CONCURRENCY_PREVIEW: { default: 1, meaning: 'listening previews this instance encodes at once (0–4), at the lowest CPU priority' },
  PREVIEW_STEMS: {
    default: false,
    meaning:
      "every audio entry of a STEM ZIP gets a listening preview too (stored at `previews/<fileId>.<entry index>.m4a`, counted as `previews`), made by the file's preview job once the ZIP is analysed; ZIPs analysed while it was off get theirs from the `previews backfill` command",
  },
  JOBS_CONCURRENCY_WEBHOOK_DELIVERY: { default: 8, meaning: 'webhook deliveries this instance sends at once (0–64)' },
  JOBS_CONCURRENCY_EMAIL: { default: 4, meaning: 'emails this instance sends at once (0–64)' },
  JOBS_CONCURRENCY_DIGEST: { default: 1, meaning: 'digest runs at once on this instance (0–64)' },
  JOBS_CONCURRENCY_TRASH_PURGE: { default: 1, meaning: 'trash purges at once on this instance (0–64)' },
  JOBS_CONCURRENCY_UPLOAD_PURGE: { default: 1, meaning: 'purges of expired resumable uploads at once on this instance (0–64)' },
  JOBS_CONCURRENCY_EXPIRED_ROWS_PURGE: { default: 1, meaning: 'purges of expired rows and leftovers at once on this instance (0–64); `0` everywhere stops the periodic purge (the one at start still runs)' },
  WEBHOOKS_ALLOW_HTTP: { default: false, meaning: 'accept plain `http://` webhook URLs (LAN set-ups, tests); otherwise `https://` only' },
  WEBHOOKS_ALLOW_PRIVATE: {
    default: false,
    meaning: 'let webhooks reach private, loopback, link-local and multicast addresses (LAN set-ups, tests); otherwise refused after DNS resolution, at creation and at every delivery',
  },
  WEBHOOK_TIMEOUT_SECONDS: { default: 15, meaning: 'how long one webhook attempt may take (1–60) before it counts as failed' },
  SMTP_URL: {
    otherwise: 'unset',
    meaning:
      '`smtp://` or `smtps://user:pass@host:port`: with `MAIL_FROM`, turns email on (invitations, password resets, notifications); off, every mail feature says so instead of failing',
  },
  MAIL_FROM: { otherwise: 'unset', meaning: 'the `From` of every email, such as `bandcollab <band@example.com>`; email is off unless it and `SMTP_URL` are set' },
  DIGEST_HOUR: { default: 8, meaning: 'the UTC hour (0–23) notification digests are emailed at (weekly ones on Mondays); only when a digest holds something' },
  ANALYSIS_TIMEOUT_SECONDS: { default: 600, meaning: "wall-clock budget of one file's analysis (1–86400); a file over it is `failed`" },
  ACCESS_TOKEN_TTL_SECONDS: { default: 900, tunable: true, meaning: "access-token lifetime (and `expiresIn`, and the cookie's Max-Age)" },
  LOGIN_MAX_FAILURES: { default: 10, tunable: true, meaning: 'failed logins per email and client address allowed in the window; the next one is 429' },
  LOGIN_WINDOW_SECONDS: { default: 900, tunable: true, meaning: 'the rate-limit window' },
  LOGIN_MAX_FAILURES_PER_ADDRESS: { default: 100, tunable: true, meaning: 'failed logins per client address over all emails allowed in the window' },
  LOGIN_MAX_SUCCESSES: { default: 30, tunable: true, meaning: 'successful logins per account (from any address) allowed in the window; the next login is 429' },
  LOGIN_MAX_SUCCESSES_PER_ADDRESS: { default: 100, tunable: true, meaning: 'successful logins per client address over all accounts allowed in the window' },
  REGISTER_MAX_PER_ADDRESS: {
    default: 20,
    tunable: true,
    meaning: 'registrations per client address allowed in the registration window; the next one is 429',
  },
  REGISTER_WINDOW_SECONDS: { default: 3600, tunable: true, meaning: 'the registration window' },
  SCRYPT_LOG_N: { default: 16, tunable: true, meaning: 'scrypt cost (2^N); 16 ≈ 100 ms per hash on a 2-core machine' },
  MAX_AUDIO_BYTES: { with: ['MAX_STEM_BYTES', 'MAX_IMAGE_BYTES'], otherwise: 'contract limits', tunable: true, meaning: 'lower the per-type upload limits' },
  EVENTS_HEARTBEAT_SECONDS: { default: 30, tunable: true, meaning: 'WebSocket ping interval; a peer that misses a pong is dropped' },
  PURGE_INTERVAL_SECONDS: { default: 300, tunable: true, meaning: 'how often expired rows are deleted (also once at start)' },
  DIGEST_CHECK_SECONDS: { default: 600, tunable: true, meaning: 'how often, within DIGEST_HOUR, the digest job looks for digests due (one instance claims each run; each digest goes once)' },
  TRASH_RETENTION_DAYS: {
    default: 30,
    meaning: 'days a deleted project, vibe, cut, file, comment, cover or vibe image stays in the trash before it is purged (0–3650); 0 deletes for good at once',
  },
  SHUTDOWN_GRACE_SECONDS: {
    default: 30,
    tunable: true,
    meaning: 'on SIGTERM/SIGINT, how long requests in flight (uploads) may take to finish before they are cut (0–3600)',
  },
  HEADERS_TIMEOUT_SECONDS: { default: 60, tunable: true, meaning: "time a client has to send a request's headers (then 408 and closed); a test tunable" },
} as const satisfies Record<string, Setting>;

type SettingName = keyof typeof SETTINGS;
/** The settings whose default is of type T. */
type SettingWith<T> = { [K in SettingName]: (typeof SETTINGS)[K] extends { default: T } ? K : never }[SettingName];

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

/** Reads every setting from the environment; reports every bad value at once. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  /** The variable as a whole number from min to max; undefined when unset or bad (then reported). */
  const wholeNumber = (name: string, min: number, max: number): number | undefined => {
    const raw = read(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (Number.isInteger(value) && value >= min && value <= max) return value;
    problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
    return undefined;
  };
  const integer = (name: SettingWith<number>, min: number, max: number): number => wholeNumber(name, min, max) ?? SETTINGS[name].default;
  const optionalInteger = (name: string, min: number, max: number): number | null => wholeNumber(name, min, max) ?? null;
  const boolean = (name: SettingName, fallback: boolean): boolean => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (/^(true|1|yes)$/i.test(raw)) return true;
    if (/^(false|0|no)$/i.test(raw)) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const url = (name: string, fallback: string): string => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    try {
      const parsed = new URL(raw);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
      return raw.replace(/\/+$/, '');
    } catch {
      problems.push(`${name} must be an http(s) URL (got "${raw}")`);
      return fallback;
    }
  };

  const port = integer('PORT', 0, 65535);
  const host = read('HOST') ?? SETTINGS.HOST.default;
  const publicUrl = url('PUBLIC_URL', `http://localhost:${port}`);
  const appUrl = url('APP_URL', publicUrl);

  const databaseUrl = read('DATABASE_URL') ?? null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }

  const jwtSecret = read('JWT_SECRET') ?? null;
  if (jwtSecret !== null && jwtSecret.length < 32) {
    problems.push('JWT_SECRET must be at least 32 characters long');
  }

  const metricsToken = read('METRICS_TOKEN') ?? null;
  if (metricsToken !== null && metricsToken.length < 32) problems.push('METRICS_TOKEN must be at least 32 characters long');

  const corsOrigins = (read('CORS_ORIGINS') ?? '')
    .split(',')
    .map((origin) => origin.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  for (const origin of corsOrigins) {
    if (!/^https?:\/\/[^/]+$/.test(origin)) problems.push(`CORS_ORIGINS has an invalid origin "${origin}"`);
  }

  const logLevelRaw = read('LOG_LEVEL') ?? SETTINGS.LOG_LEVEL.default;
  const logLevel = LOG_LEVELS.find((level) => level === logLevelRaw.toLowerCase());
  if (!logLevel) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevelRaw}")`);

  const smtpUrl = read('SMTP_URL') ?? null;
  const mailFrom = read('MAIL_FROM') ?? null;
  if (smtpUrl !== null && !/^smtps?:\/\/[^/]+/.test(smtpUrl)) problems.push('SMTP_URL must be an smtp:// or smtps:// URL');
  const mail = smtpUrl !== null && mailFrom !== null ? { smtpUrl, from: mailFrom } : null;

  const oidcIssuer = read('OIDC_ISSUER');
  const oidcClientId = read('OIDC_CLIENT_ID');
  const oidcClientSecret = read('OIDC_CLIENT_SECRET');
  let oidc: OidcSettings | null = null;
  if (oidcIssuer && oidcClientId && oidcClientSecret) {
    oidc = {
      issuer: url('OIDC_ISSUER', oidcIssuer),
      clientId: oidcClientId,
      clientSecret: oidcClientSecret,
      scopes: read('OIDC_SCOPES') ?? SETTINGS.OIDC_SCOPES.default,
    };
  }

  function storage(): Config['storage'] {
    const driver = read('STORAGE') ?? SETTINGS.STORAGE.default;
    if (driver === 'fs') return { driver };
    if (driver !== 's3') {
      problems.push(`STORAGE must be fs or s3 (got "${driver}")`);
      return { driver: 'fs' };
    }
    const bucket = read('S3_BUCKET') ?? '';
    if (bucket === '') problems.push('S3_BUCKET is required with STORAGE=s3');
    const accessKeyId = read('S3_ACCESS_KEY_ID');
    const secretAccessKey = read('S3_SECRET_ACCESS_KEY');
    if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set both or neither');
    const checksums = read('S3_CHECKSUMS') ?? SETTINGS.S3_CHECKSUMS.default;
    if (checksums !== 'when_required' && checksums !== 'when_supported') problems.push(`S3_CHECKSUMS must be when_required or when_supported (got "${checksums}")`);
    const presignedDownloads = boolean('S3_PRESIGNED_DOWNLOADS', SETTINGS.S3_PRESIGNED_DOWNLOADS.default);
    return {
      driver,
      bucket,
      region: read('S3_REGION') ?? SETTINGS.S3_REGION.default,
      endpoint: read('S3_ENDPOINT') === undefined ? null : url('S3_ENDPOINT', ''),
      forcePathStyle: boolean('S3_FORCE_PATH_STYLE', SETTINGS.S3_FORCE_PATH_STYLE.default),
      prefix: read('S3_PREFIX') ?? '',
      credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : null,
      partSizeBytes: integer('S3_PART_SIZE_MB', 5, 5120) * MiB,
      checksums: checksums === 'when_supported' ? 'when_supported' : 'when_required',
      presignedDownloads,
    };
  }

  /** JOBS_CONCURRENCY_<KIND> for every kind; CPU-heavy kinds (a worker thread each) at most 4. */
  function jobsConcurrency(): Record<JobKindName, number> {
    const heavy = new Set<JobKindName>(['analysis', 'preview']);
    const kinds = Object.keys(JOB_KINDS) as JobKindName[];
    return Object.fromEntries(
      kinds.map((kind) => {
        const name = `JOBS_CONCURRENCY_${kind.toUpperCase()}` as SettingWith<number>;
        const max = heavy.has(kind) ? 4 : 64;
        const earlier = kind === 'analysis' && read(name) === undefined ? wholeNumber('ANALYSIS_CONCURRENCY', 0, max) : undefined;
        return [kind, earlier ?? integer(name, 0, max)];
      }),
    ) as Record<JobKindName, number>;
  }

  const maxConnections = integer('MAX_CONNECTIONS', 1, 1_000_000);
  const config: Config = {
    port,
    host,
    publicUrl,
    appUrl,
    dataDir: path.resolve(read('DATA_DIR') ?? SETTINGS.DATA_DIR.default),
    databaseUrl,
    jwtSecret,
    cookieSecure: boolean('COOKIE_SECURE', publicUrl.startsWith('https:')),
    corsOrigins,
    trustProxy: boolean('TRUST_PROXY', SETTINGS.TRUST_PROXY.default),
    metrics: { token: metricsToken, loopback: boolean('METRICS_LOOPBACK', SETTINGS.METRICS_LOOPBACK.default) },
    logLevel: logLevel ?? SETTINGS.LOG_LEVEL.default,
    oidc,
    idleTimeoutSeconds: integer('IDLE_TIMEOUT_SECONDS', 1, 86_400),
    maxConnections,
    maxConnectionsPerAddress: optionalInteger('MAX_CONNECTIONS_PER_ADDRESS', 1, 1_000_000) ?? Math.max(1, Math.min(200, Math.floor(maxConnections / 10))),
    accessTokenTtlSeconds: integer('ACCESS_TOKEN_TTL_SECONDS', 1, 86_400),
    loginMaxFailures: integer('LOGIN_MAX_FAILURES', 1, 1_000_000),
    loginWindowSeconds: integer('LOGIN_WINDOW_SECONDS', 1, 86_400),
    loginMaxFailuresPerAddress: integer('LOGIN_MAX_FAILURES_PER_ADDRESS', 1, 1_000_000),
    loginMaxSuccesses: integer('LOGIN_MAX_SUCCESSES', 1, 1_000_000),
    loginMaxSuccessesPerAddress: integer('LOGIN_MAX_SUCCESSES_PER_ADDRESS', 1, 1_000_000),
    registerMaxPerAddress: integer('REGISTER_MAX_PER_ADDRESS', 1, 1_000_000),
    registerWindowSeconds: integer('REGISTER_WINDOW_SECONDS', 1, 86_400),
    scryptLogN: integer('SCRYPT_LOG_N', 1, 20),
    maxAudioBytes: optionalInteger('MAX_AUDIO_BYTES', 1, MAX_UPLOAD_BYTES.CUT),
    maxStemBytes: optionalInteger('MAX_STEM_BYTES', 1, MAX_UPLOAD_BYTES.STEM),
    maxImageBytes: optionalInteger('MAX_IMAGE_BYTES', 1, MAX_UPLOAD_BYTES.IMAGE),
    eventsHeartbeatSeconds: integer('EVENTS_HEARTBEAT_SECONDS', 1, 3600),
    purgeIntervalSeconds: integer('PURGE_INTERVAL_SECONDS', 1, 86_400),
    trashRetentionDays: integer('TRASH_RETENTION_DAYS', 0, 3650),
    shutdownGraceSeconds: integer('SHUTDOWN_GRACE_SECONDS', 0, 3600),
    headersTimeoutSeconds: integer('HEADERS_TIMEOUT_SECONDS', 1, 3600),
    minFreeDiskBytes: integer('MIN_FREE_DISK_MB', 0, 1_048_576_000) * MiB,
    userQuotaBytes: megabytes(optionalInteger('USER_QUOTA_MB', 1, 1_048_576_000)),
    jobsConcurrency: jobsConcurrency(),
    analysisTimeoutSeconds: integer('ANALYSIS_TIMEOUT_SECONDS', 1, 86_400),
    previewStems: boolean('PREVIEW_STEMS', SETTINGS.PREVIEW_STEMS.default),
    mail,
    digestHour: integer('DIGEST_HOUR', 0, 23),
    digestCheckSeconds: integer('DIGEST_CHECK_SECONDS', 1, 3600),
    webhooks: {
      allowHttp: boolean('WEBHOOKS_ALLOW_HTTP', SETTINGS.WEBHOOKS_ALLOW_HTTP.default),
      allowPrivate: boolean('WEBHOOKS_ALLOW_PRIVATE', SETTINGS.WEBHOOKS_ALLOW_PRIVATE.default),
      timeoutSeconds: integer('WEBHOOK_TIMEOUT_SECONDS', 1, 60),
    },
    storage: storage(),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
