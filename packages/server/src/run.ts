import 'reflect-metadata';
import { type RunningServer, startServer } from './app.js';
import { runCommand } from './commands.js';
import { ConfigError, loadConfig } from './core/config.js';
import { keepRunningWithoutOutput, Logger } from './core/logger.js';

/** The server band talks to when nothing else is named (packages/cli's DEFAULT_API_URL). */
const BAND_DEFAULT_API_URL = 'http://localhost:3000';

async function main(): Promise<void> {
  keepRunningWithoutOutput();
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }

  const args = process.argv.slice(2);
  if (args.length > 0) {
    process.exitCode = await runCommand(config, args);
    return;
  }

  let running: RunningServer | undefined = undefined;
  running = await startServer(config, {
    // Restarting the embedded database failed: exit non-zero, so a supervisor (systemd, Docker) restarts the server.
    onDatabaseLost: (error) => {
      process.stderr.write(`the database is lost, exiting: ${error.message}\n`);
      void (running?.close() ?? Promise.resolve()).finally(() => process.exit(1));
    },
  });
  const server = running;
  const log = new Logger(config.logLevel);

  // One Ctrl-C on `pnpm start` arrives twice, the terminal's and the one pnpm forwards: signals within a second
  // of the first are that one. A second one later cuts the requests still in flight.
  let firstSignalAt: number | undefined;
  const shutdown = (signal: string) => {
    if (firstSignalAt !== undefined) {
      if (Date.now() - firstSignalAt < 1000) return;
      log.announce(`${signal} received again: cutting the requests still in flight`, { signal });
      void server.close();
      return;
    }
    firstSignalAt = Date.now();
    log.announce(`${signal} received, shutting down (up to ${config.shutdownGraceSeconds} s for requests in flight)`, { signal, graceSeconds: config.shutdownGraceSeconds });
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // Only now: whoever reads this line may signal at once, and the write wakes that reader, which can run
  // before this process does again; before the handlers, a SIGTERM killed the server by the signal
  // (`pnpm start` then ended by it too, exit null, in CI). stdout stays JSON lines (`pnpm start | jq`); a person
  // at a terminal also reads the line on stderr.
  const ready = readyLine(server.url, server.config.publicUrl, server.noAccounts);
  log.announce(ready, { url: server.url, publicUrl: server.config.publicUrl });
  if (process.stderr.isTTY) process.stderr.write(`${ready}\n`);
}

/**
 * Where the server listens, and the address band should use: the public URL (by default
 * http://localhost:<PORT>, which band and its stored logins treat as 127.0.0.1), without --api-url when it is
 * band's own default. On a server without accounts, the first command is a registration (the first account
 * becomes the site ADMIN), not a login that cannot succeed.
 */
function readyLine(url: string, publicUrl: string, noAccounts: boolean): string {
  const command = `band auth ${noAccounts ? 'register' : 'login'}`;
  return `listening on ${url} (band: ${publicUrl === BAND_DEFAULT_API_URL ? command : `${command} --api-url ${publicUrl}`})`;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
