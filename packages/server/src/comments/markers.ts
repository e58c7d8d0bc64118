// A file's comments as markers a DAW or editor opens: each format is one pure function of the comments.
// The WAV export, which wraps the stored audio itself, lives in wav-cues.ts.
import { writeMidi, type MidiEvent } from 'midi-file';

/** A top-level comment with its replies, as the exports need it. */
export interface ExportedComment {
  id: string;
  /** Null for a comment about the whole mix. */
  atMs: number | null;
  endMs: number | null;
  author: string;
  /** Left through a feedback link: `author` is the name the guest typed, which may be a member's. */
  guest: boolean;
  body: string;
  resolved: boolean;
  version: number;
  replies: ExportedReply[];
}

export interface ExportedReply {
  id: string;
  author: string;
  guest: boolean;
  body: string;
  version: number;
}

/** A point (endMs null) or a region, its times already moved by the export's offset. */
export interface Marker {
  atMs: number;
  endMs: number | null;
  name: string;
  commentId: string;
  resolved: boolean;
}

/**
 * Marker names stop here: DAWs show a line of a marker's name, and a 5,000-character body would only bloat
 * every format (REAPER, Logic and Pro Tools all cut far shorter names on screen).
 */
export const MARKER_NAME_LIMIT = 255;

/**
 * Who wrote it, as every format names them: a guest's name with ` (guest)` after it (as `band comment list`
 * shows it), so a guest who calls themselves `Ana` never reads as the member Ana.
 */
export function authorLabel(entry: { author: string; guest: boolean }): string {
  return entry.guest ? `${entry.author} (guest)` : entry.author;
}

/** `<author>: <body>` on one line (runs of whitespace, newlines included, become one space), within the limit. */
export function markerName(author: string, body: string): string {
  const name = `${author}: ${body}`.replace(/\s+/g, ' ').trim();
  const codePoints = [...name];
  return codePoints.length <= MARKER_NAME_LIMIT ? name : `${codePoints.slice(0, MARKER_NAME_LIMIT - 1).join('')}…`;
}

/** The top-level comments that have a time, as markers in time order; a range becomes a region. */
export function markersOf(comments: readonly ExportedComment[], offsetMs: number): Marker[] {
  return comments
    .filter((comment): comment is ExportedComment & { atMs: number } => comment.atMs !== null)
    .map((comment) => ({
      atMs: comment.atMs + offsetMs,
      endMs: comment.endMs === null ? null : comment.endMs + offsetMs,
      name: markerName(authorLabel(comment), comment.body),
      commentId: comment.id,
      resolved: comment.resolved,
    }))
    .sort((a, b) => a.atMs - b.atMs);
}

/**
 * A marker the format cannot place (a MIDI gap or a WAV cue position past what its fields hold): the export
 * is refused (400 naming `format`) rather than written with the marker moved or left out.
 */
export class UnplaceableMarker extends Error {}

/** Ticks per quarter note and the one tempo, 120 BPM: a quarter note is 500 ms, so a tick is 500/960 ms. */
export const MIDI_TICKS_PER_QUARTER = 960;
const MICROSECONDS_PER_QUARTER = 500_000;
/** A Standard MIDI File's delta time is a variable-length quantity of at most four bytes. */
const MAX_MIDI_DELTA = 0x0fffffff;
const ticksAt = (ms: number): number => Math.round((ms * MIDI_TICKS_PER_QUARTER * 1000) / MICROSECONDS_PER_QUARTER);

/**
 * A Standard MIDI File, type 1 with one track: the tempo, then a marker meta event (FF 06) per marker; a
 * region's end is a second marker named `<name> (end)`. Names are written as UTF-8 bytes, which Logic, Cubase,
 * Studio One and REAPER read.
 */
export function midiMarkers(markers: readonly Marker[]): Uint8Array {
  const points = markers
    .flatMap((marker) => [
      { ms: marker.atMs, text: marker.name },
      ...(marker.endMs === null ? [] : [{ ms: marker.endMs, text: `${marker.name} (end)` }]),
    ])
    .sort((a, b) => a.ms - b.ms);
  const track: MidiEvent[] = [
    { deltaTime: 0, meta: true, type: 'trackName', text: 'bandcollab comments' },
    { deltaTime: 0, meta: true, type: 'setTempo', microsecondsPerBeat: MICROSECONDS_PER_QUARTER },
    { deltaTime: 0, meta: true, type: 'timeSignature', numerator: 4, denominator: 4, metronome: 24, thirtyseconds: 8 },
  ];
  let at = 0;
  for (const point of points) {
    const ticks = ticksAt(point.ms);
    if (ticks - at > MAX_MIDI_DELTA) {
      throw new UnplaceableMarker(
        `the marker at ${clockTime(point.ms)} is ${clockTime(((ticks - at) * MICROSECONDS_PER_QUARTER) / MIDI_TICKS_PER_QUARTER / 1000)} after the one before it (or the start), longer than the ${clockTime((MAX_MIDI_DELTA * MICROSECONDS_PER_QUARTER) / MIDI_TICKS_PER_QUARTER / 1000)} a MIDI file can place between two events: choose another format or a smaller offsetMs`,
      );
    }
    // midi-file writes a text's UTF-16 code units as bytes: hand it the UTF-8 bytes as a byte string.
    track.push({ deltaTime: ticks - at, meta: true, type: 'marker', text: Buffer.from(point.text, 'utf8').toString('latin1') });
    at = ticks;
  }
  track.push({ deltaTime: 0, meta: true, type: 'endOfTrack' });
  return Uint8Array.from(writeMidi({ header: { format: 1, numTracks: 1, ticksPerBeat: MIDI_TICKS_PER_QUARTER }, tracks: [track] }));
}

/** REAPER's source type for a mix of this extension. */
const REAPER_SOURCES: Record<string, string> = { wav: 'WAVE', aif: 'WAVE', aiff: 'WAVE', mp3: 'MP3', flac: 'FLAC', ogg: 'VORBIS', m4a: 'VIDEO', aac: 'VIDEO' };

/**
 * A REAPER project (.RPP) that places the mix (`mixFileName`, beside it in the export's ZIP) at 0 on one
 * track, with a `MARKER` line per marker; a region is REAPER's pair of lines sharing an index, flag 1.
 */
export function reaperProject(markers: readonly Marker[], mix: { fileName: string; extension: string; durationMs: number | null }): string {
  const seconds = (ms: number): string => (ms / 1000).toFixed(6);
  const lines = ['<REAPER_PROJECT 0.1 "7.0" 0', '  TEMPO 120 4 4'];
  markers.forEach((marker, index) => {
    const number = index + 1;
    if (marker.endMs === null) {
      lines.push(`  MARKER ${number} ${seconds(marker.atMs)} ${reaperString(marker.name)} 0`);
    } else {
      lines.push(`  MARKER ${number} ${seconds(marker.atMs)} ${reaperString(marker.name)} 1`);
      lines.push(`  MARKER ${number} ${seconds(marker.endMs)} "" 1`);
    }
  });
  lines.push(
    '  <TRACK',
    `    NAME ${reaperString(mix.fileName)}`,
    '    <ITEM',
    '      POSITION 0',
    ...(mix.durationMs === null ? [] : [`      LENGTH ${seconds(mix.durationMs)}`]),
    `      NAME ${reaperString(mix.fileName)}`,
    `      <SOURCE ${REAPER_SOURCES[mix.extension.toLowerCase()] ?? 'WAVE'}`,
    `        FILE ${reaperString(mix.fileName)}`,
    '      >',
    '    >',
    '  >',
    '>',
  );
  return `${lines.join('\n')}\n`;
}

/**
 * A string as REAPER's project files quote it: in the first of ", ' and ` that it does not contain (REAPER
 * has no escapes); one that holds all three loses its backticks.
 */
export function reaperString(text: string): string {
  const quote = ['"', "'", '`'].find((candidate) => !text.includes(candidate));
  return quote ? `${quote}${text}${quote}` : `\`${text.replaceAll('`', "'")}\``;
}

/** An Audacity label track: `start<TAB>end<TAB>label`, seconds with 6 decimals (a point has end = start). */
export function audacityLabels(markers: readonly Marker[]): string {
  const seconds = (ms: number): string => (ms / 1000).toFixed(6);
  return markers.map((marker) => `${seconds(marker.atMs)}\t${seconds(marker.endMs ?? marker.atMs)}\t${marker.name}\n`).join('');
}

/** `H:MM:SS.mmm`. */
export function clockTime(ms: number): string {
  const whole = Math.round(ms);
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor(whole / 60_000) % 60;
  const seconds = Math.floor(whole / 1000) % 60;
  const millis = whole % 1000;
  return `${hours}:${String(minutes).padStart(2, '0')}:${String(seconds).padStart(2, '0')}.${String(millis).padStart(3, '0')}`;
}

/**
 * RFC 4180 (CRLF rows, quoted fields): every comment, a whole-mix one with empty times and a reply under its
 * parent's times and status. Bodies keep their newlines. A comment is text, never code (OWASP's CSV injection
 * rules): a cell holding a separator of any locale (`,` `;`), a quote or a line break is quoted, and a formula
 * character (= + - @, tab or carriage return) at its start or right after any such separator or line break gets
 * an apostrophe before it, so neither a spreadsheet that splits on `;` nor one that ignores quotes runs it.
 */
export function csvSheet(comments: readonly ExportedComment[], offsetMs: number): string {
  const rows = [['#', 'Start', 'End', 'Author', 'Comment', 'Status', 'Version']];
  const ordered = [...comments].sort((a, b) => (a.atMs ?? Infinity) - (b.atMs ?? Infinity));
  for (const comment of ordered) {
    const start = comment.atMs === null ? '' : clockTime(comment.atMs + offsetMs);
    const end = comment.endMs === null ? '' : clockTime(comment.endMs + offsetMs);
    const status = comment.resolved ? 'resolved' : 'open';
    for (const entry of [comment, ...comment.replies]) {
      rows.push([String(rows.length), start, end, authorLabel(entry), entry.body, status, String(entry.version)]);
    }
  }
  return rows.map((row) => `${row.map(csvCell).join(',')}\r\n`).join('');
}

function csvCell(value: string): string {
  const safe = value.replace(/(^|[,;\t\r\n])(?=[=+\-@\t\r])/g, "$1'");
  return /[",;\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export interface JsonMarker {
  atMs: number | null;
  endMs: number | null;
  name: string;
  commentId: string;
  guest: boolean;
  resolved: boolean;
}

/** Every comment for scripts: markers first in time, whole-mix comments after; a reply at its parent's times. */
export function jsonMarkers(comments: readonly ExportedComment[], offsetMs: number): JsonMarker[] {
  const moved = (ms: number | null): number | null => (ms === null ? null : ms + offsetMs);
  const ordered = [...comments].sort((a, b) => (a.atMs ?? Infinity) - (b.atMs ?? Infinity));
  return ordered.flatMap((comment) =>
    [comment, ...comment.replies].map((entry) => ({
      atMs: moved(comment.atMs),
      endMs: moved(comment.endMs),
      name: markerName(authorLabel(entry), entry.body),
      commentId: entry.id,
      guest: entry.guest,
      resolved: comment.resolved,
    })),
  );
}
