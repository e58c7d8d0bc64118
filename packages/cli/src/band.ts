// The entry point: band on this process's streams, environment and clock (systemIo).
import { EXIT } from './exit-codes.js';
import { systemIo } from './io.js';
import { runBand } from './main.js';

// `band project list | head -1`: a reader that went away is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(EXIT.ok);
});
process.on('SIGINT', () => {
  if (process.stderr.isTTY) process.stderr.write('\u001b[?25h\n');
  process.exit(EXIT.interrupted);
});

process.exitCode = await runBand(process.argv.slice(2), systemIo());
