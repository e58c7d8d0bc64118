import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const SERVER_BIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

export interface SpawnOptions {
  /**
   * In a process group of its own, as a shell runs a foreground job: `process.kill(-child.pid, 'SIGINT')`
   * then reaches every process of the group, as a terminal's Ctrl-C does.
   */
  detached?: boolean;
  timeoutMs?: number;
}

/** Settings for a server process: every test names a DATA_DIR of its own. */
export type ServerEnv = Record<string, string> & { DATA_DIR: string };

/**
 * The environment of a server process: the test's settings over the runner's environment, less the DATA_DIR and
 * DATABASE_URL it may carry (a developer's shell that runs `pnpm start` beside `pnpm test`). Without a DATA_DIR
 * the server would take ./data of the working directory, a live server's files: a test that names none fails.
 */
export function serverEnvironment(env: ServerEnv): NodeJS.ProcessEnv {
  if (!env.DATA_DIR) throw new Error('a test server process needs a DATA_DIR of its own (without one it would use ./data)');
  const { DATA_DIR: _inheritedDataDir, DATABASE_URL: _inheritedDatabaseUrl, ...inherited } = process.env;
  return { ...inherited, ...env };
}

/** Spawns the built server as a user would run it, and waits for its `listening on` line. */
export async function spawnServer(env: ServerEnv, { detached = false, timeoutMs = 60_000 }: SpawnOptions = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [SERVER_BIN], {
    // No registration limit and no free-disk floor unless a test sets them (machines here are sometimes short of disk).
    env: serverEnvironment({ PORT: '0', LOG_LEVEL: 'warn', SCRYPT_LOG_N: '4', REGISTER_MAX_PER_ADDRESS: '1000000', MIN_FREE_DISK_MB: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), timeoutMs);
    const onData = () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return { child, url, output: () => output, exited };
}

/** Runs the built server binary with arguments (administrative commands) and collects its output. */
export async function runServerCommand(args: string[], env: ServerEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const environment = serverEnvironment(env);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SERVER_BIN, ...args], { env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
