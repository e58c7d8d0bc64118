// Questions on a terminal: a line, a password (not echoed), a yes/no. Off a terminal nothing is asked;
// callers turn that into a usage error that names the flag to use instead.
import { createInterface } from 'node:readline/promises';
import { CliError, EXIT, usageError } from './exit-codes.js';
import type { Io } from './io.js';
import { printable } from './render.js';

export function isInteractive(io: Io): boolean {
  return Boolean(io.stdin.isTTY && io.stderr.isTTY);
}

export async function ask(io: Io, question: string): Promise<string> {
  const lines = createInterface({ input: io.stdin, output: io.stderr });
  try {
    // Questions name things from the server ("Delete vibe <name>?").
    return (await lines.question(printable(question))).trim();
  } finally {
    lines.close();
  }
}

/** Reads a line without echoing it. Ctrl-C interrupts (exit 130). */
export function askSecret(io: Io, question: string): Promise<string> {
  io.stderr.write(question);
  const stdin = io.stdin;
  stdin.setRawMode?.(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      io.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003') return done(new CliError('interrupted', EXIT.interrupted));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else if (char >= ' ') value += char;
      }
    };
    stdin.on('data', onData);
  });
}

/** Reads everything on stdin (for --password-stdin), without the final newline. */
export async function readStdin(io: Io): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/**
 * Asks before something destructive. With --yes it goes ahead; on a terminal it asks; elsewhere it refuses,
 * so a script never deletes by accident.
 */
export async function confirm(io: Io, question: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!isInteractive(io)) throw usageError(`${question.replace(/\?$/, '')}: refusing without --yes (not a terminal)`);
  const answer = await ask(io, `${question} [y/N] `);
  if (!/^y(es)?$/i.test(answer)) throw new CliError('cancelled', EXIT.error);
}
