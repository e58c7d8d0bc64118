// Everything band prints goes through here (raw payloads aside: a downloaded file's bytes, `auth token`'s
// token, completion scripts): records and tables on stdout, messages, progress and errors on stderr. With
// --json, stdout carries only the API's records, as JSON. Colour, spinners and progress bars appear only on
// a terminal; cli-progress and ora are imported only when a bar or spinner is shown. The human views of the
// larger records (a project, a file, storage, an event) are at the end.
//
// Strings from the server (names, emails, descriptions, event data, error details) may hold terminal control
// sequences: another member's description could write the clipboard (OSC 52), retitle the window or erase
// lines. Human output passes through printable() on its way out (writeLines), so none reaches the terminal;
// --json output is JSON, whose string escapes cover every control character (see jsonText).
import { randomBytes } from 'node:crypto';
import type { FileRecord, Project, ProjectDetail, ProjectEvent, StorageBreakdown, StorageQuota, StorageStats } from '@bandcollab/sdk';
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
    const detail = this.debug && requestId ? `${message} (request id ${requestId})` : message;
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
    if (!this.progressEnabled) return new SilentProgress();
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
    return `${STYLE_MARK}${open}m${text}${STYLE_MARK}${close}m`;
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
  stop(): void;
}

export interface FileProgress {
  update(loaded: number): void;
  finish(ok: boolean): void;
}

const STYLES = { bold: [1, 22], dim: [2, 22], red: [31, 39] } as const;

/**
 * Stands for ESC + "[" in styled text until printable() has run: random per process, so no server string
 * can hold one and have it turned into an escape sequence.
 */
const STYLE_MARK = `\uE000${randomBytes(8).toString('hex')}`;
const STYLE_MARKS = new RegExp(`${STYLE_MARK}(\\d+)m`, 'g');

/** Control characters a terminal acts on: C0 but newline and tab, DEL, and C1 (U+0080–U+009F). */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` with every control character but newline and tab shown as `\xHH` (ESC as `\x1b`, CSI as `\x9b`),
 * so it cannot move the cursor, erase, retitle the window or write the clipboard. A CR before a newline
 * (Windows line ends) is dropped.
 */
export function printable(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(CONTROL_CHARACTERS, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * JSON.stringify escapes C0 characters but leaves DEL and C1 as they are, and some terminals act on C1 in
 * UTF-8: those get \u escapes too. Outside strings JSON has none of them, so the JSON means the same.
 */
function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\u007f-\u009f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

class SilentProgress implements TransferProgress {
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

  stop(): void {
    this.refreshOverall();
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
    writeLines(stream, `${verb} ${fileCount} file${fileCount === 1 ? '' : 's'} (${formatBytes(totalBytes)})`);
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
  const shown = printable(text).replace(STYLE_MARKS, '\u001b[$1m');
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

/** An ISO timestamp as "2026-11-21 10:00" (UTC). */
export function formatTime(iso: string | null): string {
  if (!iso) return '-';
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/** Adds an "Examples:" block to a command's --help. */
export function withExamples<T extends { addHelpText(position: 'after', text: string): T }>(command: T, ...examples: string[]): T {
  return command.addHelpText('after', `\nExamples:\n${examples.map((line) => `  $ ${line}`).join('\n')}`);
}

// ---- human views of the API's records (--json prints the records themselves)

export function projectTable(out: Output, projects: readonly Project[]): string {
  return out.table(
    projects,
    [
      { header: 'NAME', value: (p) => p.name },
      { header: 'ROLE', value: (p) => p.role },
      { header: 'MEMBERS', value: (p) => String(p.memberCount) },
      { header: 'CREATED', value: (p) => formatTime(p.createdAt) },
      { header: 'ID', value: (p) => p.id },
    ],
    'No projects yet: band project create <name>',
  );
}

/** A project with its members, invitations and the tree of vibes, cuts and files. */
export function projectView(out: Output, detail: ProjectDetail): string {
  const lines = [`${out.bold(detail.name)}  ${out.dim(detail.id)}`];
  if (detail.description) lines.push(detail.description);
  lines.push(`Your role: ${detail.role}   created ${formatTime(detail.createdAt)}   updated ${formatTime(detail.updatedAt)}`, '', out.bold('Members'));
  for (const member of detail.members) lines.push(`  ${member.name} <${member.email}>  ${member.role}`);
  for (const invitation of detail.invitations) lines.push(`  ${invitation.email}  ${invitation.role}  (invited, expires ${formatTime(invitation.expiresAt)})`);
  lines.push('', out.bold('Vibes'));
  if (detail.vibes.length === 0) lines.push('  (none)');
  for (const vibe of detail.vibes) {
    lines.push(`  ${vibe.name}  ${out.dim(vibe.id)}`);
    for (const cut of vibe.cuts) {
      lines.push(`    ${cut.name}  ${out.dim(cut.id)}`);
      for (const file of cut.files) lines.push(`      ${file.name}  ${file.type}  ${formatBytes(file.size)}  ${out.dim(file.id)}`);
    }
  }
  return lines.join('\n');
}

export function fileTable(out: Output, files: readonly FileRecord[]): string {
  return out.table(files, [
    { header: 'NAME', value: (f) => f.name },
    { header: 'TYPE', value: (f) => f.type },
    { header: 'SIZE', value: (f) => formatBytes(f.size) },
    { header: 'UPLOADED BY', value: (f) => f.uploadedBy.name },
    { header: 'CREATED', value: (f) => formatTime(f.createdAt) },
    { header: 'ID', value: (f) => f.id },
  ]);
}

export function fileView(out: Output, file: FileRecord): string {
  return [
    `${out.bold(file.name)}  ${out.dim(file.id)}`,
    `Type:        ${file.type} (${file.mimeType})`,
    `Size:        ${formatBytes(file.size)} (${file.size} bytes)`,
    `SHA-256:     ${file.sha256}`,
    `Uploaded by: ${file.uploadedBy.name}, ${formatTime(file.createdAt)}`,
    `Cut:         ${file.cutId}`,
    `Path:        ${file.url}`,
  ].join('\n');
}

/** The caller's storage by type, and the whole site's for a site ADMIN. */
export function storageView(out: Output, stats: StorageStats): string {
  const lines = [out.bold('Your uploads'), breakdownTable(out, stats.breakdown, stats.totalSize, stats.fileCount)];
  if (stats.quota) lines.push('', quotaLine(stats.quota));
  if (stats.site) {
    lines.push('', out.bold(`Whole site: ${stats.site.userCount} users, ${stats.site.projectCount} projects`));
    lines.push(breakdownTable(out, stats.site.breakdown, stats.site.totalSize, stats.site.fileCount));
  }
  return lines.join('\n');
}

/** "Quota: 1.2 GiB of 5.0 GiB used (24%)"; the server counts images as well as files. */
function quotaLine(quota: StorageQuota): string {
  const percent = Math.floor((quota.usedBytes / quota.limitBytes) * 100);
  return `Quota: ${formatBytes(quota.usedBytes)} of ${formatBytes(quota.limitBytes)} used (${percent}%)`;
}

function breakdownTable(out: Output, breakdown: StorageBreakdown, totalSize: number, fileCount: number): string {
  const rows = [
    { type: 'audio', ...breakdown.audio },
    { type: 'stems', ...breakdown.stems },
    { type: 'images', ...breakdown.images },
    { type: 'total', size: totalSize, count: fileCount },
  ];
  return out.table(rows, [
    { header: 'TYPE', value: (row) => row.type },
    { header: 'SIZE', value: (row) => formatBytes(row.size) },
    { header: 'FILES', value: (row) => String(row.count) },
  ]);
}

export function eventLine(out: Output, event: ProjectEvent, projectName: string): string {
  const time = `${event.at.slice(0, 10)} ${event.at.slice(11, 19)}`;
  return `${out.dim(time)}  ${out.bold(projectName)}  ${event.type}  ${event.actor.name} ${describeEvent(event)}`;
}

/** What the actor did, in words. */
function describeEvent(event: ProjectEvent): string {
  switch (event.type) {
    case 'project.updated':
      return `updated the project (now "${event.data.project.name}")`;
    case 'project.deleted':
      return 'deleted the project';
    case 'member.added':
      return `added ${event.data.member.name} as ${event.data.member.role}`;
    case 'member.removed':
      return event.data.userId === event.actor.id ? 'left the project' : `removed member ${event.data.userId}`;
    case 'member.role_changed':
      return `made ${event.data.member.name} ${event.data.member.role}`;
    case 'vibe.created':
      return `created vibe "${event.data.vibe.name}"`;
    case 'vibe.updated':
      return `updated vibe "${event.data.vibe.name}"`;
    case 'vibe.deleted':
      return `deleted vibe ${event.data.vibeId}`;
    case 'vibes.reordered':
      return 'reordered the vibes';
    case 'cut.created':
      return `created cut "${event.data.cut.name}"`;
    case 'cut.updated':
      return `updated cut "${event.data.cut.name}"`;
    case 'cut.moved':
      return `moved cut "${event.data.cut.name}" to another vibe`;
    case 'cut.deleted':
      return `deleted cut ${event.data.cutId}`;
    case 'file.uploaded': {
      const { file } = event.data;
      return `uploaded "${file.name}" (${file.type}, ${formatBytes(file.size)})`;
    }
    case 'file.deleted':
      return `deleted file ${event.data.fileId}`;
    case 'file.shared':
      return `shared file ${event.data.fileId}${event.data.expiresAt ? ` until ${event.data.expiresAt}` : ''}`;
  }
}
