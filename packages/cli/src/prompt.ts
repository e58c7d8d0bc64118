// Questions on a terminal: a line, a password (not echoed), a yes/no. Off a terminal nothing is asked;
// callers turn that into a usage error that names the flag to use instead.
import { createInterface } from 'node:readline/promises';
import { CliError, EXIT, usageError } from './exit-codes.js';
import { printable } from './render.js';

export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY);
}

export async function ask(question: string): Promise<string> {
  const lines = createInterface({ input: process.stdin, output: process.stderr });
  try {
    // Questions name things from the server ("Delete vibe <name>?").
    return (await lines.question(printable(question))).trim();
  } finally {
    lines.close();
  }
}

/** Reads a line without echoing it. Ctrl-C interrupts (exit 130). */
export function askSecret(question: string): Promise<string> {
  process.stderr.write(question);
  const stdin = process.stdin;
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
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
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/**
 * Asks before something destructive. With --yes it goes ahead; on a terminal it asks; elsewhere it refuses,
 * so a script never deletes by accident.
 */
export async function confirm(question: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!isInteractive()) throw usageError(`${question.replace(/\?$/, '')}: refusing without --yes (not a terminal)`);
  const answer = await ask(`${question} [y/N] `);
  if (!/^y(es)?$/i.test(answer)) throw new CliError('cancelled', EXIT.error);
}
