import type { LogLevel } from './config.js';
import { REDACTED, SECRET_HEADERS } from './redact.js';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, unknown>;

/** One JSON object per line on stdout, so log shippers need no parser of their own. */
export class Logger {
  constructor(private readonly level: LogLevel) {}

  /** Whether lines of `level` are written: a caller whose fields cost something to gather asks first. */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean {
    return ORDER[level] >= ORDER[this.level];
  }

  debug(msg: string, fields?: LogFields): void {
    this.write('debug', msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.write('info', msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.write('warn', msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.write('error', msg, fields);
  }

  /** Written whatever LOG_LEVEL says, as `info`: the lines a supervisor or a script waits for (ready, shutting down). */
  announce(msg: string, fields?: LogFields): void {
    this.line('info', msg, fields);
  }

  private write(level: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields): void {
    if (this.enabled(level)) this.line(level, msg, fields);
  }

  private line(level: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields): void {
    const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }, loggable);
    process.stdout.write(`${line}\n`);
  }
}

/**
 * `pnpm start | tee log` (or `| jq`) and Ctrl-C: the reader exits at once, and every later write to stdout
 * fails with EPIPE, emitted as an 'error' that would end the process on the spot (uploads get no grace, the
 * embedded database is left running). Output that nobody can take any more is dropped instead; the process
 * goes on, and its shutdown finishes.
 */
export function keepRunningWithoutOutput(): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
}

/** Errors as their name, message and stack; credentials never, whatever object carries them. */
function loggable(key: string, value: unknown): unknown {
  if (SECRET_HEADERS.has(key.toLowerCase())) return REDACTED;
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
