// One band run: it builds the program (program.ts) and loads only the command group the arguments name (the
// others appear in help as one-line stubs): not the SDK (undici), conf, or the other groups until a command
// runs. Everything it reads and writes goes through the Io of the factory it is given, and every SDK client it
// makes comes from that factory. `band --version`, `band --help` and `band completion` are answered before
// this file loads (band.cts).
import { CommanderError } from 'commander';
import { CliError, EXIT, EXIT_CODES_HELP } from './exit-codes.js';
import type { Factory } from './factory.js';
import { buildProgram, GROUPS, targetGroup } from './program.js';
import { Output } from './render.js';

/** Runs band with `args` (the arguments after `band`) on `factory` and answers its exit code. */
export async function runBand(args: readonly string[], systemFactory: Factory): Promise<number> {
  const io = args.includes('--no-color') ? { ...systemFactory.io, env: { ...systemFactory.io.env, NO_COLOR: '1' } } : systemFactory.io;
  const factory: Factory = { io, newClient: (options) => systemFactory.newClient(options) };
  if (args[0] === 'help' && args[1] === 'exit-codes') {
    io.stdout.write(EXIT_CODES_HELP);
    return EXIT.ok;
  }
  const program = buildProgram(io);
  const target = targetGroup(args);
  for (const [name, group] of Object.entries(GROUPS)) {
    const command = program.command(name).description(group.summary);
    if (name === target) (await group.load()).register(command, factory);
  }
  try {
    await program.parseAsync(args, { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const options = program.opts();
    const out = new Output({ json: false, quiet: false, color: options.color !== false, progress: false, debug: Boolean(options.debug) }, io);
    const failure = error instanceof CliError ? error : (await import('./errors.js')).toCliError(error);
    out.error(failure.message, failure.requestId);
    return failure.exitCode;
  }
}
