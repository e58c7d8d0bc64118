import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { Readable } from 'node:stream';
import path from 'node:path';
import tonejs from '@tonejs/midi';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  audacityLabels,
  clockTime,
  csvSheet,
  type ExportedComment,
  jsonMarkers,
  MARKER_NAME_LIMIT,
  markerName,
  markersOf,
  midiMarkers,
  reaperProject,
  reaperString,
  UnplaceableMarker,
} from '../../src/comments/markers.js';
import { planWavExport, type Segment } from '../../src/comments/wav-cues.js';
import { localFileSource } from '../../src/core/store/fs-store.js';
import { ffprobeStream, generate, hasFfmpeg } from '../analysis/ffmpeg.js';

const golden = (name: string): string => path.join(import.meta.dirname, 'golden', name);

/**
 * A review round on a 3-minute mix: points, a range, a whole-mix note, a reply, a resolved one, odd text, and a
 * guest through a feedback link who calls themselves Ana, like the member, with a formula after a `;`.
 */
const COMMENTS: ExportedComment[] = [
  { id: 'c1', atMs: 83_000, endMs: null, author: 'Ana', guest: false, body: 'Kick too loud\nhere', resolved: false, version: 2, replies: [{ id: 'r1', author: 'Bo', guest: false, body: 'Agreed, -2 dB?', version: 2 }] },
  { id: 'c2', atMs: 12_345, endMs: 20_001, author: 'Bo', guest: false, body: 'Guitar "buzz", all verse', resolved: true, version: 1, replies: [] },
  { id: 'c3', atMs: null, endMs: null, author: 'Cy', guest: false, body: '=HYPERLINK("x") whole mix: more air', resolved: false, version: 2, replies: [] },
  { id: 'c4', atMs: 1, endMs: null, author: 'Dé', guest: false, body: 'Count-in «é» 🎸', resolved: false, version: 2, replies: [] },
  { id: 'c5', atMs: 179_999, endMs: 180_500, author: 'Ana', guest: true, body: "tail 'n' `fade`;=cmd|' /C calc'!A0", resolved: false, version: 2, replies: [] },
];
const OFFSET = 1_000;
const markers = markersOf(COMMENTS, OFFSET);
/** Every marker's expected times in ms: the top-level comments with a time, moved by the offset, in time order. */
const EXPECTED = COMMENTS.filter((c) => c.atMs !== null)
  .map((c) => ({ atMs: c.atMs! + OFFSET, endMs: c.endMs === null ? null : c.endMs + OFFSET, name: markerName(c.guest ? `${c.author} (guest)` : c.author, c.body) }))
  .sort((a, b) => a.atMs - b.atMs);

describe('marker names', () => {
  it('are "<author>: <body>" on one line, cut to the limit', () => {
    expect(markerName('Ana', ' Kick\n too\tloud ')).toBe('Ana: Kick too loud');
    const long = markerName('Ana', 'x'.repeat(6000));
    expect([...long]).toHaveLength(MARKER_NAME_LIMIT);
    expect(long.endsWith('…')).toBe(true);
  });

  it('leave out whole-mix comments and replies, and come in time order', () => {
    expect(markers.map((m) => m.commentId)).toEqual(['c4', 'c2', 'c1', 'c5']);
  });
});

describe('MIDI markers', () => {
  const bytes = midiMarkers(markers);

  it('match the golden file', async () => {
    expect(Buffer.from(bytes).equals(await readFile(golden('markers.mid')))).toBe(true);
  });

  it('read back with another MIDI parser: 960 PPQ, 120 BPM, every marker within one tick', () => {
    const midi = new tonejs.Midi(bytes);
    expect(midi.header.ppq).toBe(960);
    expect(midi.header.tempos.map((t) => t.bpm)).toEqual([120]);
    const read = midi.header.meta.filter((m) => m.type === 'marker');
    const expected = EXPECTED.flatMap((m) => [
      { ms: m.atMs, text: m.name },
      ...(m.endMs === null ? [] : [{ ms: m.endMs, text: `${m.name} (end)` }]),
    ]).sort((a, b) => a.ms - b.ms);
    expect(read).toHaveLength(expected.length);
    read.forEach((marker, index) => {
      const tickMs = 500 / 960;
      expect(Math.abs(midi.header.ticksToSeconds(marker.ticks) * 1000 - expected[index]!.ms)).toBeLessThanOrEqual(tickMs);
      expect(Buffer.from(marker.text, 'latin1').toString('utf8')).toBe(expected[index]!.text);
    });
  });
});

describe('markers a format cannot place', () => {
  const at = (atMs: number) => ({ atMs, endMs: null, name: 'far', commentId: 'c', resolved: false });

  it('MIDI: refuses a gap longer than a delta time holds (0x0FFFFFFF ticks, 38:50:10), places one just below', () => {
    expect(() => midiMarkers([at(2_000_000_000)])).toThrow(UnplaceableMarker);
    expect(() => midiMarkers([at(139_811_000)])).toThrow(/longer than the 38:50:10\.133 a MIDI file can place/);
    const midi = new tonejs.Midi(midiMarkers([at(139_800_000), at(200_000_000)]));
    expect(midi.header.meta.filter((m) => m.type === 'marker').map((m) => Math.round(midi.header.ticksToSeconds(m.ticks) * 1000))).toEqual([139_800_000, 200_000_000]);
  });

  it('WAV: refuses a cue past sample frame 2^32 - 1 (6:12:49 at 192 kHz), places one just before', async () => {
    const fmt = Buffer.from(FMT);
    fmt.writeUInt32LE(192_000, 12);
    fmt.writeUInt32LE(768_000, 16);
    const file = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE', 'latin1'), fmt, riffChunk('data', 400, Buffer.alloc(400))]);
    const source = virtualFile(file.length, [{ at: 0, bytes: file }]).source;
    await expect(planWavExport(source, [at(22_369_622)])).rejects.toThrow(/past the last sample frame a WAV cue point holds \(2\^32 − 1, 6:12:49\.621 at 192000 Hz\)/);
    await expect(planWavExport(source, [{ ...at(1000), endMs: 22_400_000 }])).rejects.toThrow(/longer than the 2\^32 − 1 sample frames a WAV region holds/);
    // A region may end past that frame: its length is what the file holds.
    await planWavExport(source, [{ ...at(20_000_000), endMs: 30_000_000 }]);
    const plan = await planWavExport(source, [at(22_369_620)]);
    const cue = Buffer.concat(plan.segments.map((segment) => ('bytes' in segment ? segment.bytes : Buffer.alloc(segment.to - segment.from))));
    expect(cue.readUInt32LE(cue.indexOf('cue ', 12, 'latin1') + 12 + 20)).toBe(Math.round(22_369_620 * 192));
  });
});

describe('REAPER project', () => {
  const rpp = reaperProject(markers, { fileName: 'Mix v2.wav', extension: 'wav', durationMs: 181_000 });

  it('matches the golden file', async () => {
    expect(rpp).toBe(await readFile(golden('markers.RPP'), 'utf8'));
  });

  it('holds a MARKER line per point and a pair per region, within 1 ms', () => {
    const lines = [...rpp.matchAll(/^ {2}MARKER (\d+) ([\d.]+) (?:"([^"]*)"|'([^']*)'|`([^`]*)`) (\d)$/gm)].map((m) => ({
      index: Number(m[1]),
      ms: Number(m[2]) * 1000,
      name: m[3] ?? m[4] ?? m[5],
      region: m[6] === '1',
    }));
    const read = EXPECTED.map((_, index) => {
      const mine = lines.filter((line) => line.index === index + 1);
      return { atMs: mine[0]!.ms, endMs: mine[1]?.ms ?? null, name: mine[0]!.name, region: mine[0]!.region };
    });
    read.forEach((marker, index) => {
      const expected = EXPECTED[index]!;
      expect(Math.abs(marker.atMs - expected.atMs)).toBeLessThan(1);
      if (expected.endMs === null) expect(marker.endMs).toBeNull();
      else expect(Math.abs(marker.endMs! - expected.endMs)).toBeLessThan(1);
      expect(marker.name).toBe(expected.name);
      expect(marker.region).toBe(expected.endMs !== null);
    });
    expect(rpp).toContain('FILE "Mix v2.wav"');
  });

  it('quotes a name in a quote it does not contain', () => {
    expect(reaperString('a "b"')).toBe(`'a "b"'`);
    expect(reaperString(`"'\``)).toBe(`\`"''\``);
  });
});

describe('Audacity labels', () => {
  const labels = audacityLabels(markers);

  it('match the golden file', async () => {
    expect(labels).toBe(await readFile(golden('markers.txt'), 'utf8'));
  });

  it('read back as start, end and label within 1 ms', () => {
    const rows = labels.trimEnd().split('\n').map((line) => line.split('\t'));
    rows.forEach(([start, end, label], index) => {
      const expected = EXPECTED[index]!;
      expect(Math.abs(Number(start) * 1000 - expected.atMs)).toBeLessThan(1);
      expect(Math.abs(Number(end) * 1000 - (expected.endMs ?? expected.atMs))).toBeLessThan(1);
      expect(label).toBe(expected.name);
    });
  });
});

describe('CSV', () => {
  const sheet = csvSheet(COMMENTS, OFFSET);

  it('matches the golden file', async () => {
    expect(sheet).toBe(await readFile(golden('markers.csv'), 'utf8'));
  });

  it('reads back with an RFC 4180 parser: every comment and reply, times within 1 ms, formulas defused', () => {
    const rows = parseCsv(sheet, { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual(['#', 'Start', 'End', 'Author', 'Comment', 'Status', 'Version']);
    expect(rows).toHaveLength(6);
    const toMs = (time: string): number => {
      const [h, m, s] = time.split(':');
      return (Number(h) * 3600 + Number(m) * 60 + Number(s)) * 1000;
    };
    const kick = rows.filter((row) => row.Start === clockTime(84_000));
    expect(kick.map((row) => row.Comment)).toEqual(['Kick too loud\nhere', 'Agreed, -2 dB?']);
    expect(Math.abs(toMs(rows.find((row) => row.Author === 'Bo' && row.End !== '')!.End!) - 21_001)).toBeLessThan(1);
    const whole = rows.find((row) => row.Author === 'Cy')!;
    expect(whole.Start).toBe('');
    expect(whole.Comment).toBe(`'=HYPERLINK("x") whole mix: more air`);
    expect(rows.map((row) => row.Status)).toContain('resolved');
    // The guest who calls themselves Ana is not the member Ana.
    expect(rows.filter((row) => row.Author === 'Ana').map((row) => row.Comment)).toEqual(['Kick too loud\nhere']);
    expect(rows.find((row) => row.Author === 'Ana (guest)')!.Comment).toBe("tail 'n' `fade`;'=cmd|' /C calc'!A0");
  });

  it('leaves no cell that starts a formula, for a spreadsheet splitting on ; and for one ignoring quotes', () => {
    const formula = /^[=+\-@\t\r]/;
    const bySemicolon = parseCsv(sheet, { delimiter: ';', record_delimiter: '\r\n', relax_column_count: true, relax_quotes: true }) as string[][];
    expect(bySemicolon.flat().filter((cell) => formula.test(cell))).toEqual([]);
    const unquoted = sheet.split(/[,;\r\n]/);
    expect(unquoted.filter((cell) => formula.test(cell.replace(/^"/, '')))).toEqual([]);
  });
});

describe('JSON', () => {
  it('holds every comment with times moved by the offset, replies at their parent\u2019s', () => {
    const list = jsonMarkers(COMMENTS, OFFSET);
    expect(list).toHaveLength(6);
    expect(list.find((m) => m.commentId === 'r1')).toMatchObject({ atMs: 84_000, endMs: null, resolved: false });
    expect(list.find((m) => m.commentId === 'c3')).toMatchObject({ atMs: null, endMs: null });
    expect(list.at(-1)!.commentId).toBe('c3');
    expect(list.find((m) => m.commentId === 'c5')).toMatchObject({ guest: true, name: expect.stringMatching(/^Ana \(guest\): /) });
    expect(list.find((m) => m.commentId === 'c1')).toMatchObject({ guest: false, name: expect.stringMatching(/^Ana: /) });
  });
});

describe.skipIf(!hasFfmpeg)('WAV with cue points (read back by ffprobe)', () => {
  let dir: string;
  let source: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'bandcollab-markers-'));
    source = path.join(dir, 'mix.wav');
    // A LIST/INFO chunk (the title) after "fmt ", and 24-bit audio of an odd frame count.
    generate('sine=frequency=440:sample_rate=44100', 182.5, ['-ac', '2', '-c:a', 'pcm_s24le', '-metadata', 'title=Mix v2'], source);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function exported(file: string, list = markers): Promise<{ bytes: Buffer; length: number }> {
    const plan = await planWavExport(await localFileSource(file), list);
    const handle = await open(file);
    try {
      const read = async (from: number, to: number) => {
        const buffer = Buffer.alloc(to - from);
        await handle.read(buffer, 0, buffer.length, from);
        return buffer;
      };
      const pieces = await Promise.all(plan.segments.map((s: Segment) => ('bytes' in s ? s.bytes : read(s.from, s.to))));
      return { bytes: Buffer.concat(pieces), length: plan.length };
    } finally {
      await handle.close();
    }
  }

  /** A top-level chunk's payload (a LIST of the given type). */
  const chunk = (bytes: Buffer, id: string, listType?: string): Buffer => {
    for (let at = 12; at + 8 <= bytes.length; ) {
      const size = bytes.readUInt32LE(at + 4);
      const payload = bytes.subarray(at + 8, at + 8 + size);
      if (bytes.toString('latin1', at, at + 4) === id && (!listType || payload.toString('latin1', 0, 4) === listType)) return payload;
      at += 8 + size + (size & 1);
    }
    throw new Error(`no ${id} chunk`);
  };
  const chaptersOf = (file: string): { startMs: number; title: string }[] =>
    JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_chapters', '-of', 'json', file], { encoding: 'utf8' })).chapters.map(
      (chapter: { start_time: string; tags: { title: string } }) => ({ startMs: Number(chapter.start_time) * 1000, title: chapter.tags.title }),
    );
  /** The cue ids and sample lengths of an adtl list's ltxt entries. */
  const regionLengths = (adtl: Buffer): Map<number, number> => {
    const lengths = new Map<number, number>();
    for (let at = 4; at + 8 <= adtl.length; ) {
      const size = adtl.readUInt32LE(at + 4);
      if (adtl.toString('latin1', at, at + 4) === 'ltxt') lengths.set(adtl.readUInt32LE(at + 8), adtl.readUInt32LE(at + 12));
      at += 8 + size + (size & 1);
    }
    return lengths;
  };
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  it('keeps every audio byte and the other chunks, with the length announced', async () => {
    const original = await readFile(source);
    const { bytes, length } = await exported(source);
    expect(bytes.length).toBe(length);
    expect(bytes.readUInt32LE(4)).toBe(length - 8);
    expect(sha256(chunk(bytes, 'data'))).toBe(sha256(chunk(original, 'data')));
    expect(chunk(bytes, 'fmt ').equals(chunk(original, 'fmt '))).toBe(true);
    expect(chunk(bytes, 'LIST').equals(chunk(original, 'LIST'))).toBe(true);
  });

  it('is read by ffprobe as the same audio, and by a RIFF reader with every cue within 1 ms', async () => {
    const { bytes } = await exported(source);
    const out = path.join(dir, 'cued.wav');
    await writeFile(out, bytes);
    const probe = (file: string) =>
      JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file], { encoding: 'utf8' }));
    const before = probe(source);
    const after = probe(out);
    for (const key of ['codec_name', 'sample_rate', 'channels', 'duration_ts', 'bits_per_sample']) {
      expect(after.streams[0][key]).toEqual(before.streams[0][key]);
    }
    expect(after.format.tags?.title).toBe('Mix v2');

    // ffmpeg's WAV reader turns cue points and their labels into chapters.
    const chapters = chaptersOf(out);
    expect(chapters).toHaveLength(EXPECTED.length);
    chapters.forEach((chapter, index) => {
      expect(Math.abs(chapter.startMs - EXPECTED[index]!.atMs)).toBeLessThan(1);
      expect(chapter.title).toBe(EXPECTED[index]!.name);
    });
    // A region's length is its ltxt entry, in sample frames at 44.1 kHz.
    const lengths = regionLengths(chunk(bytes, 'LIST', 'adtl'));
    EXPECTED.forEach((expected, index) => {
      const frames = lengths.get(index + 1);
      if (expected.endMs === null) expect(frames).toBeUndefined();
      else expect(Math.abs((frames! / 44.1) - (expected.endMs - expected.atMs))).toBeLessThan(1);
    });
  });

  it('replaces the cue points a source already has', async () => {
    const first = path.join(dir, 'first.wav');
    await writeFile(first, (await exported(source)).bytes);
    const again = await exported(first, markers.slice(0, 1));
    expect(again.bytes.length).toBe(again.length);
    const out = path.join(dir, 'again.wav');
    await writeFile(out, again.bytes);
    expect(chaptersOf(out).map((chapter) => chapter.title)).toEqual([EXPECTED[0]!.name]);
  });

  it('keeps an RF64 or BW64 file valid: its sizes in ds64, read by ffprobe as the same audio with every cue', async () => {
    const rf64 = path.join(dir, 'rf64.wav');
    generate('sine=frequency=440:sample_rate=44100', 182.5, ['-ac', '2', '-c:a', 'pcm_s24le', '-rf64', 'always', '-metadata', 'title=Mix v2'], rf64);
    const original = await readFile(rf64);
    const bw64 = path.join(dir, 'bw64.wav');
    await writeFile(bw64, Buffer.concat([Buffer.from('BW64', 'latin1'), original.subarray(4)]));
    for (const [file, form] of [[rf64, 'RF64'], [bw64, 'BW64']] as const) {
      const { bytes, length } = await exported(file);
      expect(bytes.length).toBe(length);
      expect(bytes.toString('latin1', 0, 4)).toBe(form);
      expect(bytes.readUInt32LE(4)).toBe(0xffffffff);
      // ds64 first, holding the new RIFF size and the data chunk's size; the data chunk's own size field -1.
      expect(bytes.toString('latin1', 12, 16)).toBe('ds64');
      const ds64 = chunk(bytes, 'ds64');
      expect(Number(ds64.readBigUInt64LE(0))).toBe(bytes.length - 8);
      const dataAt = bytes.indexOf('data', 16, 'latin1');
      expect(bytes.readUInt32LE(dataAt + 4)).toBe(0xffffffff);
      const audio = original.subarray(original.indexOf('data', 16, 'latin1') + 8);
      expect(Number(ds64.readBigUInt64LE(8))).toBe(audio.length);
      expect(sha256(bytes.subarray(dataAt + 8, dataAt + 8 + audio.length))).toBe(sha256(audio));

      const out = path.join(dir, `cued-${form}.wav`);
      await writeFile(out, bytes);
      const before = ffprobeStream(file);
      const after = ffprobeStream(out);
      for (const key of ['codec_name', 'sample_rate', 'channels', 'duration_ts', 'bits_per_sample'] as const) expect(after[key]).toEqual(before[key]);
      const chapters = chaptersOf(out);
      expect(chapters.map((chapter) => chapter.title)).toEqual(EXPECTED.map((marker) => marker.name));
      chapters.forEach((chapter, index) => expect(Math.abs(chapter.startMs - EXPECTED[index]!.atMs)).toBeLessThan(1));
    }
  });
});

/**
 * A file of `size` bytes that exists only as the pieces written into it (zeros elsewhere), read through the
 * ObjectSource interface the store gives: it counts the store reads and the bytes they send.
 */
function virtualFile(size: number, pieces: { at: number; bytes: Buffer }[]) {
  const counted = { reads: 0, bytes: 0 };
  return {
    counted,
    source: {
      size,
      async read(range?: { start: number; end: number }) {
        const start = range?.start ?? 0;
        const end = Math.min(range?.end ?? size - 1, size - 1);
        counted.reads += 1;
        async function* chunks(): AsyncGenerator<Buffer> {
          for (let at = start; at <= end; at += 64 * 1024) {
            const chunk = Buffer.alloc(Math.min(64 * 1024, end + 1 - at));
            for (const piece of pieces) {
              const from = Math.max(piece.at, at);
              const to = Math.min(piece.at + piece.bytes.length, at + chunk.length);
              if (from < to) piece.bytes.copy(chunk, from - at, from - piece.at, to - piece.at);
            }
            counted.bytes += chunk.length;
            yield chunk;
          }
        }
        return Readable.from(chunks());
      },
    },
  };
}

const riffChunk = (id: string, size: number, payload = Buffer.alloc(0)): Buffer => {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(size, 4);
  return Buffer.concat([header, payload]);
};
/** 16-bit stereo at 48 kHz. */
const FMT = (() => {
  const payload = Buffer.alloc(16);
  payload.writeUInt16LE(1, 0);
  payload.writeUInt16LE(2, 2);
  payload.writeUInt32LE(48_000, 4);
  payload.writeUInt32LE(192_000, 8);
  payload.writeUInt16LE(4, 12);
  payload.writeUInt16LE(16, 14);
  return riffChunk('fmt ', 16, payload);
})();
const MiB = 1024 * 1024;

describe('WAV export of hostile files: a few bounded reads of the store, whatever the chunks announce', () => {
  it('passes a 400 MiB LIST chunk before the audio through as ranges, reading only chunk headers', async () => {
    const listSize = 400 * MiB;
    const head = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE', 'latin1'), FMT, riffChunk('LIST', listSize, Buffer.from('INFO', 'latin1'))]);
    const dataAt = head.length - 4 + listSize;
    const size = dataAt + 8 + 4000;
    const { source, counted } = virtualFile(size, [{ at: 0, bytes: head }, { at: dataAt, bytes: riffChunk('data', 4000) }]);
    const plan = await planWavExport(source, markers);
    expect(counted.reads).toBeLessThanOrEqual(3);
    expect(counted.bytes).toBeLessThanOrEqual(3 * 64 * 1024);
    // The LIST's payload and the audio are ranges of the stored file, sent as they are.
    const ranges = plan.segments.filter((segment): segment is { from: number; to: number } => !('bytes' in segment));
    expect(ranges.reduce((sum, range) => sum + (range.to - range.from), 0)).toBeGreaterThan(listSize);
    const added = plan.segments.filter((segment): segment is { bytes: Buffer } => 'bytes' in segment).reduce((sum, segment) => sum + segment.bytes.length, 0);
    expect(plan.length).toBe(added + ranges.reduce((sum, range) => sum + (range.to - range.from), 0));
  });

  it('refuses a ds64 chunk larger than a read without reading it', async () => {
    const ds64Size = 100 * MiB;
    const head = Buffer.concat([Buffer.from('RF64\xff\xff\xff\xffWAVE', 'latin1'), riffChunk('ds64', ds64Size)]);
    const { source, counted } = virtualFile(head.length + ds64Size + 100, [{ at: 0, bytes: head }]);
    await expect(planWavExport(source, markers)).rejects.toThrow(/more than the 65536 read at once/);
    expect(counted.bytes).toBeLessThanOrEqual(64 * 1024);
  });

  it('walks 9,000 empty chunks in two reads and answers them from what it read; more than 10,000 are refused', async () => {
    const empties = Buffer.concat(Array.from({ length: 9_000 }, () => riffChunk('JUNK', 0)));
    const file = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE', 'latin1'), FMT, empties, riffChunk('data', 400, Buffer.alloc(400, 7))]);
    const { source, counted } = virtualFile(file.length, [{ at: 0, bytes: file }]);
    const plan = await planWavExport(source, markers);
    expect(counted.reads).toBeLessThanOrEqual(2);
    // What the answer reads from the store: one range at most, not one per chunk.
    expect(plan.segments.filter((segment) => !('bytes' in segment)).length).toBeLessThanOrEqual(1);

    const tooMany = Buffer.concat([file.subarray(0, 12), Buffer.concat(Array.from({ length: 10_001 }, () => riffChunk('JUNK', 0))), file.subarray(12)]);
    await expect(planWavExport(virtualFile(tooMany.length, [{ at: 0, bytes: tooMany }]).source, markers)).rejects.toThrow(/more than 10000 chunks/);
  });

  it('refuses chunks spread wider than its read budget', async () => {
    // Chunks of 100 KiB: each next header is a read of its own.
    const pieces: { at: number; bytes: Buffer }[] = [{ at: 0, bytes: Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE', 'latin1'), FMT]) }];
    let at = pieces[0]!.bytes.length;
    for (let i = 0; i < 40; i += 1, at += 8 + 100 * 1024) pieces.push({ at, bytes: riffChunk('JUNK', 100 * 1024) });
    pieces.push({ at, bytes: riffChunk('data', 0) });
    const { source, counted } = virtualFile(at + 8, pieces);
    await expect(planWavExport(source, markers)).rejects.toThrow(/spread wider than 16 reads/);
    expect(counted.reads).toBe(16);
  });
});
