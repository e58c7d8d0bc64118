import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ServerProcess, spawnServer } from './process.js';
import { createTestDatabase } from './server.js';

export interface LoggedServer extends ServerProcess {
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * The built server in its own process, on a fresh database of the shared test cluster, logging at `info`:
 * what it writes is exactly what an operator's log would hold. `env` adds or overrides settings.
 */
export async function startLoggedServer(env: Record<string, string> = {}): Promise<LoggedServer> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-logged-'));
  const server = await spawnServer({
    DATA_DIR: dataDir,
    DATABASE_URL: await createTestDatabase(),
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789',
    LOG_LEVEL: 'info',
    ...env,
  });
  return {
    ...server,
    dataDir,
    async stop() {
      server.child.kill('SIGTERM');
      await server.exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
