import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import type {} from './provided-context.js';
import postgres from 'postgres';
import { loadConfig } from '../../src/core/config.js';
import { freePort, importWithoutExitHooks, openDatabase } from '../../src/core/database.js';
import { Logger } from '../../src/core/logger.js';
import { MIGRATED_TEMPLATE } from './template.js';

/** One real PostgreSQL for the whole run; every test server gets a database of its own in it. */
export default async function setup(project: TestProject) {
  // Under the OS temp dir: the postgres user must be able to reach it when tests run as root.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-test-pg-'));
  await chmod(dir, 0o755);
  // Without its exit hooks: they call process.exit(0) on beforeExit and would hide a failed run's exit code.
  const EmbeddedPostgres = await importWithoutExitHooks();
  const port = await freePort();
  const password = 'test-password';
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300', '-c', 'fsync=off'],
    onLog: () => undefined,
    onError: (error) => console.error('[postgres]', error),
  });
  await pg.initialise();
  await pg.start();
  const url = `postgres://postgres:${password}@127.0.0.1:${port}`;
  await migrateTemplate(url, dir);
  project.provide('postgresUrl', url);
  // The S3 driver's tests (and TEST_STORAGE=s3 runs) use fauxqs, an S3 emulator from the npm registry, in this
  // process on loopback: no network, no container. Opt-in, S3_TEST_ENDPOINT names a real one instead (support/s3.ts).
  const { startFauxqs } = await import('fauxqs');
  const s3 = process.env.S3_TEST_ENDPOINT ? null : await startFauxqs({ port: await freePort(), host: '127.0.0.1', logger: false });
  project.provide('s3Endpoint', s3 ? `http://127.0.0.1:${s3.port}` : process.env.S3_TEST_ENDPOINT!);
  return async () => {
    await s3?.stop();
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  };
}

/**
 * A database with every migration applied, that test servers' databases are copied from: a copy costs about
 * half of migrating an empty database, once per test server. `migrations.test.ts` migrates empty ones.
 */
async function migrateTemplate(url: string, dir: string): Promise<void> {
  const admin = postgres(`${url}/postgres`, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`create database ${MIGRATED_TEMPLATE}`);
  await admin.end();
  const config = loadConfig({ DATABASE_URL: `${url}/${MIGRATED_TEMPLATE}`, DATA_DIR: path.join(dir, 'template-data'), JWT_SECRET: 'template-secret-template-secret-0123456789' });
  const database = await openDatabase(config, new Logger('silent'));
  await database.close();
}
