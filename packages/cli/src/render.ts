// Everything band prints goes through here (raw payloads aside: a downloaded file's bytes, `auth token`'s
// token, completion scripts): records and tables on stdout, messages, progress and errors on stderr. With
// --json, stdout carries only the API's records, as JSON. Colour, spinners and progress bars appear only on
// a terminal; cli-progress and ora are imported only when a bar or spinner is shown. How records, results and
// events look to people is the business of views/ (a module per command group, built on what is here): a
// command hands what it got to a view and never builds human text itself.
//
// Strings from the server (names, emails, descriptions, event data, error details) may hold terminal control
// sequences: another member's description could write the clipboard (OSC 52), retitle the window or erase
// lines. Human output passes through printable() on its way out (writeLines), so none reaches the terminal;
// --json output is JSON, whose string escapes cover every control character (see jsonText).
import { randomBytes } from 'node:crypto';
import type { MultiBar, SingleBar } from 'cli-progress';
import { type Io, isCI, type OutStream } from './io.js';

export interface OutputOptions {
  json: boolean;
  quiet: boolean;
  color: boolean;
  progress: boolean;
  debug: boolean;
}

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
}

/** Plain progress lines off a terminal: one every this many milliseconds. */
const PLAIN_PROGRESS_INTERVAL_MS = 3000;

export class Output {
  readonly json: boolean;
  readonly quiet: boolean;
  readonly debug: boolean;
  private readonly stdoutColor: boolean;
  private readonly stderrColor: boolean;
  private readonly progressEnabled: boolean;
  private readonly stdout: OutStream;
  private readonly stderr: OutStream;

  constructor(
    options: OutputOptions,
    private readonly io: Io,
  ) {
    this.json = options.json;
    this.quiet = options.quiet;
    this.debug = options.debug;
    this.stdout = io.stdout;
    this.stderr = io.stderr;
    this.stdoutColor = options.color && colorSupported(io.stdout, io.env);
    this.stderrColor = options.color && colorSupported(io.stderr, io.env);
    this.progressEnabled = options.progress && !options.quiet;
  }

  /** A record (or list of records): JSON with --json, else the human rendering. */
  record(value: unknown, human: () => string): void {
    if (this.json) this.stdout.write(`${jsonText(value, 2)}\n`);
    else writeLines(this.stdout, human());
  }

  /**
   * What a command that changed something did ("Created vibe Q1 (…)"): the record with --json, nothing with
   * --quiet (a script that wants the id asks for --json), else the line on stdout.
   */
  done(value: unknown, human: () => string): void {
    if (this.json) this.record(value, human);
    else if (!this.quiet) writeLines(this.stdout, human());
  }

  /** One record of a stream (watch): compact JSON on one line with --json, so it pipes into jq and line tools. */
  recordLine(value: unknown, human: () => string): void {
    if (this.json) this.stdout.write(`${jsonText(value)}\n`);
    else writeLines(this.stdout, human());
  }

  /** A status message for people (a summary, what was created on the way): stderr, suppressed by --quiet. */
  info(message: string): void {
    if (!this.quiet) writeLines(this.stderr, message);
  }

  /** A notice the user should see even with --quiet (e.g. where credentials went). */
  notice(message: string): void {
    writeLines(this.stderr, `band: ${message}`);
  }

  /** The one line for a failed command. */
  error(message: string, requestId?: string): void {
    // The server's request id with every error it answered: the admin finds the log line by it (`reqId`).
    const detail = requestId ? `${message} (request id ${requestId})` : message;
    writeLines(this.stderr, `${this.paint('red', 'error:', 'stderr')} ${detail}`);
  }

  debugLine(message: string): void {
    if (this.debug) writeLines(this.stderr, this.paint('dim', `debug: ${message}`, 'stderr'));
  }

  table<Row>(rows: readonly Row[], columns: readonly Column<Row>[], empty = '(none)'): string {
    if (rows.length === 0) return empty;
    const cells = rows.map((row) => columns.map((column) => column.value(row)));
    const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((line) => line[i]!.length)));
    const format = (line: string[]) => line.map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
    const header = this.paint('bold', format(columns.map((column) => column.header)), 'stdout');
    return [header, ...cells.map(format)].join('\n');
  }

  bold(text: string): string {
    return this.paint('bold', text, 'stdout');
  }

  dim(text: string): string {
    return this.paint('dim', text, 'stdout');
  }

  /** Is stderr a real terminal that can show bars and spinners? */
  private get liveTerminal(): boolean {
    return Boolean(this.stderr.isTTY) && (this.stderr.columns ?? 0) > 0 && !isCI(this.io.env);
  }

  /** Progress for a set of transfers: bars on a terminal, plain lines elsewhere, nothing with --no-progress. */
  async transfers(verb: string, fileCount: number, totalBytes: number): Promise<TransferProgress> {
    // Nothing to transfer is said by the command's summary, not by "pushing 0 files (0 B)".
    if (!this.progressEnabled || fileCount === 0) return new SilentProgress((message) => this.info(message));
    if (this.liveTerminal) {
      // A CommonJS package: in the bundle, its exports are only the default export.
      const { MultiBar, Presets } = (await import('cli-progress')).default;
      const bars = new MultiBar(
        {
          stream: this.stderr,
          format: '{bar} {percentage}% | {filesDone}/{fileCount} {name} | {value}/{total}',
          barsize: 24,
          hideCursor: true,
          clearOnComplete: false,
          stopOnComplete: false,
          autopadding: true,
          formatValue: (value, _options, type) => (type === 'value' || type === 'total' ? formatBytes(value) : String(value)),
        },
        Presets.shades_classic,
      );
      return new BarProgress(bars, verb, fileCount, totalBytes);
    }
    return new PlainProgress(this.stderr, verb, fileCount, totalBytes);
  }

  /** A spinner on a terminal while something slow happens; off a terminal, nothing. */
  async spinner(text: string): Promise<Spinner> {
    if (!this.progressEnabled || !this.liveTerminal) return { stop: () => undefined };
    const { default: ora } = await import('ora');
    const spinner = ora({ text, stream: this.stderr as NodeJS.WriteStream, color: this.stderrColor ? 'cyan' : false, discardStdin: false }).start();
    return { stop: () => void spinner.stop() };
  }

  /** Marks `text` for a style; writeLines turns the marks into the terminal's codes. */
  private paint(style: keyof typeof STYLES, text: string, stream: 'stdout' | 'stderr'): string {
    const enabled = stream === 'stdout' ? this.stdoutColor : this.stderrColor;
    if (!enabled) return text;
    const [open, close] = STYLES[style];
    const mark = styleMark();
    return `${mark}${open}m${text}${mark}${close}m`;
  }
}

export interface Spinner {
  stop(): void;
}

export interface TransferProgress {
  /** Starts one file; returns its handle. */
  start(name: string, size: number): FileProgress;
  /** Records a file that needs no transfer (skipped). */
  skip(name: string, size: number): void;
  /** A status line about one transfer ("resuming … at …"), written where the bars do not draw over it. */
  note(message: string): void;
  stop(): void;
}

export interface FileProgress {
  update(loaded: number): void;
  finish(ok: boolean): void;
}

const STYLES = { bold: [1, 22], dim: [2, 22], red: [31, 39] } as const;

/**
 * Stands for ESC + "[" in styled text until printable() has run: random per process, so no server string
 * can hold one and have it turned into an escape sequence. Made by the first paint: a run without colours
 * (a pipe, CI) has no mark to turn into codes, and does not load node:crypto (the build loads a Node module
 * when it is first used: tsup.config.ts).
 */
let styleMarks: { mark: string; pattern: RegExp } | undefined;
function styleMark(): string {
  if (!styleMarks) {
    const mark = `\uE000${randomBytes(8).toString('hex')}`;
    styleMarks = { mark, pattern: new RegExp(`${mark}(\\d+)m`, 'g') };
  }
  return styleMarks.mark;
}

/** Control characters a terminal acts on: C0 but newline and tab, DEL, and C1 (U+0080–U+009F). */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Bidirectional controls (ALM, LRM, RLM, the embeddings, overrides and isolates): they reorder what follows
 * them, so `take<U+202E>vaw.exe` would show as `takeexe.wav`, and a name could pose as another.
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const hex = (char: string, digits: number): string => char.charCodeAt(0).toString(16).padStart(digits, '0');

/**
 * `text` with every control character but newline and tab shown as `\xHH` (ESC as `\x1b`, CSI as `\x9b`),
 * so it cannot move the cursor, erase, retitle the window or write the clipboard, and every bidirectional
 * control as `\uHHHH`, so it cannot reorder what is shown. A CR before a newline (Windows line ends) is dropped.
 */
export function printable(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .replace(CONTROL_CHARACTERS, (char) => `\\x${hex(char, 2)}`)
    .replace(BIDI_CONTROLS, (char) => `\\u${hex(char, 4)}`);
}

/**
 * JSON.stringify escapes C0 characters but leaves DEL, C1 and the bidirectional controls as they are; some
 * terminals act on C1 in UTF-8, and bidi controls reorder what a terminal shows: those get \u escapes too.
 * Outside strings JSON has none of them, so the JSON means the same.
 */
function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent)
    .replace(/[\u007f-\u009f]/g, (char) => `\\u${hex(char, 4)}`)
    .replace(BIDI_CONTROLS, (char) => `\\u${hex(char, 4)}`);
}

class SilentProgress implements TransferProgress {
  /** Notes still reach the user (unless --quiet): only the progress is silent. */
  constructor(readonly note: (message: string) => void) {}

  start(): FileProgress {
    return { update: () => undefined, finish: () => undefined };
  }
  skip(): void {}
  stop(): void {}
}

/** Counts finished files and bytes moved over all files. */
class Totals {
  done = 0;
  private readonly loaded = new Map<number, number>();
  private finishedBytes = 0;
  private next = 0;

  open(): number {
    this.loaded.set(this.next, 0);
    return this.next++;
  }

  update(id: number, loaded: number): void {
    this.loaded.set(id, loaded);
  }

  close(id: number, size: number): void {
    this.loaded.delete(id);
    this.finishedBytes += size;
    this.done += 1;
  }

  get bytes(): number {
    let sum = this.finishedBytes;
    for (const value of this.loaded.values()) sum += value;
    return sum;
  }
}

class BarProgress implements TransferProgress {
  private readonly totals = new Totals();
  private readonly overall: SingleBar;

  constructor(
    private readonly bars: MultiBar,
    verb: string,
    private readonly fileCount: number,
    totalBytes: number,
  ) {
    this.overall = bars.create(Math.max(totalBytes, 1), 0, { name: verb, filesDone: 0, fileCount });
  }

  // cli-progress writes to the terminal itself: names (a download's comes from the server) are made printable here.
  start(name: string, size: number): FileProgress {
    const label = printable(name);
    const id = this.totals.open();
    const bar = this.bars.create(Math.max(size, 1), 0, { name: label }, { format: '{bar} {percentage}% | {value}/{total} {name}' });
    return {
      update: (loaded) => {
        this.totals.update(id, loaded);
        bar.update(loaded);
        this.refreshOverall();
      },
      finish: (ok) => {
        this.totals.close(id, ok ? size : 0);
        this.bars.remove(bar);
        this.bars.log(`${ok ? 'done' : 'FAILED'}  ${label}\n`);
        this.refreshOverall();
      },
    };
  }

  skip(name: string, size: number): void {
    this.totals.close(this.totals.open(), size);
    this.bars.log(`skipped  ${printable(name)} (already on the cut)\n`);
    this.refreshOverall();
  }

  note(message: string): void {
    this.bars.log(`${printable(message)}\n`);
  }

  stop(): void {
    this.refreshOverall();
    // A finished overall bar says so, rather than "uploading" at 100%.
    if (this.totals.done === this.fileCount) this.overall.update({ name: 'done' });
    // Draw once more so lines logged since the last redraw are not lost.
    this.bars.update();
    this.bars.stop();
  }

  private refreshOverall(): void {
    this.overall.update(this.totals.bytes, { filesDone: this.totals.done, fileCount: this.fileCount });
  }
}

class PlainProgress implements TransferProgress {
  private readonly totals = new Totals();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly stream: OutStream,
    private readonly verb: string,
    private readonly fileCount: number,
    private readonly totalBytes: number,
  ) {
    writeLines(stream, `${verb} ${counted(fileCount, 'file')} (${formatBytes(totalBytes)})`);
    this.timer = setInterval(() => this.line(), PLAIN_PROGRESS_INTERVAL_MS);
    this.timer.unref();
  }

  start(_name: string, size: number): FileProgress {
    const id = this.totals.open();
    return {
      update: (loaded) => this.totals.update(id, loaded),
      finish: (ok) => this.totals.close(id, ok ? size : 0),
    };
  }

  skip(_name: string, size: number): void {
    this.totals.close(this.totals.open(), size);
  }

  note(message: string): void {
    writeLines(this.stream, message);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private line(): void {
    const percent = this.totalBytes > 0 ? Math.floor((this.totals.bytes / this.totalBytes) * 100) : 100;
    writeLines(
      this.stream,
      `${this.verb}: ${this.totals.done}/${this.fileCount} files, ${formatBytes(this.totals.bytes)} of ${formatBytes(this.totalBytes)} (${percent}%)`,
    );
  }
}

/** The one way human output reaches a terminal: made printable, then styled. */
function writeLines(stream: OutStream, text: string): void {
  const shown = styleMarks ? printable(text).replace(styleMarks.pattern, '\u001b[$1m') : printable(text);
  stream.write(shown.endsWith('\n') ? shown : `${shown}\n`);
}

function colorSupported(stream: OutStream, env: Io['env']): boolean {
  if (env.NO_COLOR) return false;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 1536 → "1.5 KiB". */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** 1 → "1 project", 2 → "2 projects" (nouns with a plain plural -s). */
export function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** An ISO timestamp as "2026-11-21 10:00" (UTC). */
export function formatTime(iso: string | null): string {
  if (!iso) return '-';
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/** Adds an "Examples:" block to a command's --help. */
export function withExamples<T extends { addHelpText(position: 'after', text: string): T }>(command: T, ...examples: string[]): T {
  return command.addHelpText('after', `\nExamples:\n${examples.map((line) => `  $ ${line}`).join('\n')}`);
}
