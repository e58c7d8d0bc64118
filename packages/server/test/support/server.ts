import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { s3TestEnv, storageUnderTest } from './s3.js';
import { inject } from 'vitest';
import { startServer } from '../../src/app.js';
import type { Clock } from '../../src/core/clock.js';
import { type Config, loadConfig } from '../../src/core/config.js';
import type { Sql } from '../../src/core/database.js';
import type { ServerEnv } from './process.js';
import { type StoredObjects, storedObjects } from './stored.js';
import type {} from './provided-context.js';
import { MIGRATED_TEMPLATE } from './template.js';

export interface TestServer {
  url: string;
  config: Config;
  /** A connection to this server's own database, for asserting what is (not) stored. */
  sql: Sql;
  dataDir: string;
  /** Its stored bytes, through the driver it runs on (STORAGE=fs or s3). */
  stored: StoredObjects;
  /** Settings as environment variables, to start another process (or the built binary) on the same state. */
  env: ServerEnv;
  /** The routes the server registered, as `METHOD /path/:param`. */
  routes: string[];
  /** The clock this server signs and checks access tokens against; tests move it instead of sleeping. */
  clock: TestClock;
  close(): Promise<void>;
}

/** The real time plus however far a test has moved it on. */
export class TestClock implements Clock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  advance(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }
}

/**
 * Under TEST_STORAGE=s3, the bucket of each DATA_DIR a test server started on: a server started again on the
 * same DATA_DIR (a restart, a second instance) is on the same state, bucket included.
 */
const bucketOf = new Map<string, Record<string, string>>();

/** The storage settings (STORAGE, S3_*) among `env`: another process or server on the same stored bytes. */
export function storageSettings(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => name === 'STORAGE' || name.startsWith('S3_')));
}

/** Creates an empty database in the shared test cluster and returns its URL. */
export async function createTestDatabase(): Promise<string> {
  const base = inject('postgresUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = postgres(`${base}/postgres`, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  return `${base}/${name}`;
}

/**
 * Creates a database in the shared test cluster with every migration applied (a copy of the one the global
 * setup migrated), under an identity of its own as if migrated here, and returns its URL.
 */
export async function createMigratedTestDatabase(): Promise<string> {
  const base = inject('postgresUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = postgres(`${base}/postgres`, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${name} template ${MIGRATED_TEMPLATE}`);
  await admin.end();
  const url = `${base}/${name}`;
  const copy = postgres(url, { max: 1, onnotice: () => undefined });
  // Migration 022 gave the template a random id: every copy gets one of its own, as each would migrating.
  await copy`update database_identity set id = gen_random_uuid()`;
  await copy.end();
  return url;
}

/**
 * Starts the real server in this process on a loopback port, with its own database and DATA_DIR.
 * `env` overrides settings exactly as the environment would (e.g. `{ ACCESS_TOKEN_TTL_SECONDS: '2' }`).
 * A server restarted on the same state takes the first one's `clock`, so tokens it signed stay as old.
 */
export async function startTestServer(env: Record<string, string> = {}, clock = new TestClock()): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-test-data-'));
  const databaseUrl = env.DATABASE_URL ?? (await createMigratedTestDatabase());
  const settings: ServerEnv = {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    SCRYPT_LOG_N: '4',
    // Every test user registers from loopback: only the tests of that limit set it low.
    REGISTER_MAX_PER_ADDRESS: '1000000',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789',
    // Machines here are sometimes short of disk: no free-disk floor unless a test sets one.
    MIN_FREE_DISK_MB: '0',
    ...(storageUnderTest === 's3' && env.STORAGE === undefined ? await bucketFor(env.DATA_DIR ?? dataDir) : {}),
    ...env,
    DATA_DIR: env.DATA_DIR ?? dataDir,
    DATABASE_URL: databaseUrl,
  };
  const config = loadConfig(settings);
  // Frozen: settings are read once and never changed after start (startServer throws if it assigns one).
  const running = await startServer(Object.freeze(config), { clock });
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => undefined });
  const stored = await storedObjects(running.config);
  return {
    url: running.url,
    config: running.config,
    sql,
    dataDir: settings.DATA_DIR!,
    stored,
    clock,
    env: settings,
    routes: running.app.middleware
      .filter((m) => m.type === 'route' && m.method !== undefined)
      .map((m) => `${m.method} ${m.path}`),
    async close() {
      await sql.end({ timeout: 1 });
      stored.close();
      await running.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function bucketFor(dataDir: string): Promise<Record<string, string>> {
  const known = bucketOf.get(dataDir);
  if (known) return known;
  const fresh = await s3TestEnv();
  bucketOf.set(dataDir, fresh);
  return fresh;
}
