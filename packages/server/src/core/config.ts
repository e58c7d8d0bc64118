import path from 'node:path';
import { MAX_UPLOAD_BYTES } from '@bandcollab/sdk/contract';

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
  logLevel: LogLevel;
  oidc: OidcSettings | null;
  /** A request body (or a response its reader no longer takes) that moves no byte for this long is cut. */
  idleTimeoutSeconds: number;
  /** Open connections beyond this are closed as they arrive. */
  maxConnections: number;
  /** Tunables with production defaults; tests lower them so nothing waits for minutes. */
  accessTokenTtlSeconds: number;
  loginMaxFailures: number;
  loginWindowSeconds: number;
  /** Failed logins per client address over all emails in the login window. */
  loginMaxFailuresPerAddress: number;
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
  /** On SIGINT/SIGTERM, how long requests in flight (uploads) get to finish before they are cut. */
  shutdownGraceSeconds: number;
  /** How long a client may take to send a request's headers. */
  headersTimeoutSeconds: number;
  /** Files this instance analyses at once (each holds a database connection while it runs); 0: none. */
  analysisConcurrency: number;
  /** The wall-clock budget of one file's analysis; a file over it is `failed`. */
  analysisTimeoutSeconds: number;
}

const MiB = 1024 * 1024;
const megabytes = (value: number | null): number | null => (value === null ? null : value * MiB);

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
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const optionalInteger = (name: string, min: number, max: number): number | null =>
    read(name) === undefined ? null : integer(name, 0, min, max);
  const boolean = (name: string, fallback: boolean): boolean => {
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

  const port = integer('PORT', 3000, 0, 65535);
  const host = read('HOST') ?? '127.0.0.1';
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

  const corsOrigins = (read('CORS_ORIGINS') ?? '')
    .split(',')
    .map((origin) => origin.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  for (const origin of corsOrigins) {
    if (!/^https?:\/\/[^/]+$/.test(origin)) problems.push(`CORS_ORIGINS has an invalid origin "${origin}"`);
  }

  const logLevelRaw = read('LOG_LEVEL') ?? 'info';
  const logLevel = LOG_LEVELS.find((level) => level === logLevelRaw.toLowerCase());
  if (!logLevel) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevelRaw}")`);

  const oidcIssuer = read('OIDC_ISSUER');
  const oidcClientId = read('OIDC_CLIENT_ID');
  const oidcClientSecret = read('OIDC_CLIENT_SECRET');
  let oidc: OidcSettings | null = null;
  if (oidcIssuer && oidcClientId && oidcClientSecret) {
    oidc = {
      issuer: url('OIDC_ISSUER', oidcIssuer),
      clientId: oidcClientId,
      clientSecret: oidcClientSecret,
      scopes: read('OIDC_SCOPES') ?? 'openid email profile',
    };
  }

  const config: Config = {
    port,
    host,
    publicUrl,
    appUrl,
    dataDir: path.resolve(read('DATA_DIR') ?? './data'),
    databaseUrl,
    jwtSecret,
    cookieSecure: boolean('COOKIE_SECURE', publicUrl.startsWith('https:')),
    corsOrigins,
    trustProxy: boolean('TRUST_PROXY', false),
    logLevel: logLevel ?? 'info',
    oidc,
    idleTimeoutSeconds: integer('IDLE_TIMEOUT_SECONDS', 60, 1, 86_400),
    maxConnections: integer('MAX_CONNECTIONS', 2000, 1, 1_000_000),
    accessTokenTtlSeconds: integer('ACCESS_TOKEN_TTL_SECONDS', 900, 1, 86_400),
    loginMaxFailures: integer('LOGIN_MAX_FAILURES', 10, 1, 1_000_000),
    loginWindowSeconds: integer('LOGIN_WINDOW_SECONDS', 900, 1, 86_400),
    loginMaxFailuresPerAddress: integer('LOGIN_MAX_FAILURES_PER_ADDRESS', 100, 1, 1_000_000),
    registerMaxPerAddress: integer('REGISTER_MAX_PER_ADDRESS', 20, 1, 1_000_000),
    registerWindowSeconds: integer('REGISTER_WINDOW_SECONDS', 3600, 1, 86_400),
    scryptLogN: integer('SCRYPT_LOG_N', 16, 1, 20),
    maxAudioBytes: optionalInteger('MAX_AUDIO_BYTES', 1, MAX_UPLOAD_BYTES.CUT),
    maxStemBytes: optionalInteger('MAX_STEM_BYTES', 1, MAX_UPLOAD_BYTES.STEM),
    maxImageBytes: optionalInteger('MAX_IMAGE_BYTES', 1, MAX_UPLOAD_BYTES.IMAGE),
    eventsHeartbeatSeconds: integer('EVENTS_HEARTBEAT_SECONDS', 30, 1, 3600),
    purgeIntervalSeconds: integer('PURGE_INTERVAL_SECONDS', 300, 1, 86_400),
    shutdownGraceSeconds: integer('SHUTDOWN_GRACE_SECONDS', 30, 0, 3600),
    headersTimeoutSeconds: integer('HEADERS_TIMEOUT_SECONDS', 60, 1, 3600),
    minFreeDiskBytes: integer('MIN_FREE_DISK_MB', 1024, 0, 1_048_576_000) * MiB,
    userQuotaBytes: megabytes(optionalInteger('USER_QUOTA_MB', 1, 1_048_576_000)),
    analysisConcurrency: integer('ANALYSIS_CONCURRENCY', 1, 0, 4),
    analysisTimeoutSeconds: integer('ANALYSIS_TIMEOUT_SECONDS', 600, 1, 86_400),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
