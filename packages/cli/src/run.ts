// One band process (band.cts starts it): band on this process's streams, environment and clock (systemIo),
// with the SDK's clients.
import { setFlagsFromString } from 'node:v8';
import { EXIT } from './exit-codes.js';
import { bandFactory } from './factory.js';
import { interruptedLine } from './interrupt.js';
import { systemIo } from './io.js';
import { runBand } from './main.js';

// undici parses HTTP with llhttp compiled to WebAssembly. V8 also optimises that module on a background
// thread, which a process must wait for before it exits: about 50 ms and 35 MiB on every command that sends a
// request, more than the request itself. V8's baseline code parses a few responses' headers as fast, and bodies
// stream past the parser, so transfers keep their speed (the CLI bench measures both).
setFlagsFromString('--liftoff-only');

process.on('SIGINT', () => {
  if (process.stderr.isTTY) process.stderr.write('\u001b[?25h\n');
  process.stderr.write(`${interruptedLine()}\n`);
  process.exit(EXIT.interrupted);
});

process.exitCode = await runBand(process.argv.slice(2), bandFactory(systemIo()));
