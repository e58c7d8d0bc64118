import 'reflect-metadata';
import { startServer } from './app.js';
import { runCommand } from './commands.js';
import { ConfigError, loadConfig } from './core/config.js';

async function main(): Promise<void> {
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

  const running = await startServer(config);
  process.stdout.write(`listening on ${running.url}\n`);

  const shutdown = (signal: string) => {
    process.stdout.write(`${signal} received, shutting down\n`);
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
