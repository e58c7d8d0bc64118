// band comment and band review against a real server: in-process runs through band's factory, and one run of
// the built binary for the release gate's exit code.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { BandClient, type Comment, type FileRecord, type ReviewList } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { toneWav } from '../../server/test/support/files.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { ANSI, type CliUser, cliUser, type RunOptions, type RunResult, registerWithCli } from './support/cli.js';

// Each test runs many commands against a real server; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 90_000 });

let server: TestServer;
let ana: CliUser;
let ben: CliUser;
let anaSdk: BandClient;
let mix: FileRecord;
let projectId: string;
/** Names the mix the way a user would: by name within its cut. */
const MIX = ['mix', '--cut', 'Final', '--vibe', 'Mixes', '--project', 'Demo'];

function plain(result: RunResult): RunResult {
  expect(result.stdout).not.toMatch(ANSI);
  expect(result.stderr).not.toMatch(ANSI);
  return result;
}

async function ok(user: CliUser, args: string[], options?: RunOptions): Promise<RunResult> {
  const result = plain(await user.band(args, options));
  if (result.exitCode !== 0) throw new Error(`band ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
  return result;
}

async function json<T>(user: CliUser, args: string[]): Promise<T> {
  return JSON.parse((await ok(user, [...args, '--json'])).stdout) as T;
}

beforeAll(async () => {
  server = await startTestServer();
  ana = await cliUser(server.url);
  ben = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com', 'correct horse battery', 'Ana');
  await registerWithCli(ben, 'ben@example.com', 'correct horse battery', 'Ben');
  anaSdk = new BandClient({ baseUrl: server.url });
  await anaSdk.auth.login({ email: 'ana@example.com', password: 'correct horse battery' });
  const project = await anaSdk.projects.create({ name: 'Demo' });
  projectId = project.id;
  const vibe = await anaSdk.vibes.create(project.id, { name: 'Mixes' });
  const cut = await anaSdk.cuts.create(vibe.id, { name: 'Final' });
  await writeFile(path.join(ana.home, 'mix.wav'), toneWav(3));
  mix = await anaSdk.files.upload({ cutId: cut.id, file: path.join(ana.home, 'mix.wav'), name: 'mix' });
  const invite = await anaSdk.projects.invite(project.id, { email: 'ben@example.com', role: 'MEMBER' });
  await ok(ben, ['invitation', 'accept', invite.inviteUrl]);
});
afterAll(async () => {
  await ana?.cleanup();
  await ben?.cleanup();
  await server?.close();
});

describe('band comment', () => {
  it('says a time past the end of the mix in the units typed, from the server\'s refusal (exit 2)', async () => {
    await vi.waitFor(async () => expect((await anaSdk.files.get(mix.id)).audio?.durationMs).toBe(3000), { timeout: 60_000, interval: 50 });
    const late = await ana.band(['comment', 'add', ...MIX, 'too late', '--at', '5:00']);
    expect([late.exitCode, late.stderr]).toEqual([2, 'error: --at 5:00.000 is past the end of mix (0:03.000)\n']);
    const range = await ana.band(['comment', 'add', ...MIX, 'runs over', '--at', '1', '--to', '1:00']);
    expect([range.exitCode, range.stderr]).toEqual([2, 'error: --to 1:00.000 is past the end of mix (0:03.000)\n']);
  });

  it('adds at a moment, over a range and about the whole mix, replies, mentions, resolves, reopens, edits and deletes', async () => {
    const point = await json<Comment>(ana, ['comment', 'add', ...MIX, 'snare too loud', '--at', '1.5s']);
    expect(point).toMatchObject({ fileId: mix.id, atMs: 1500, endMs: null, body: 'snare too loud', author: { name: 'Ana' } });
    const range = await json<Comment>(ben, ['comment', 'add', mix.id, 'vocals drift', '--at', '0:00.250', '--to', '0:02', '--mention', 'ana@example.com']);
    expect(range).toMatchObject({ atMs: 250, endMs: 2000, mentions: [{ name: 'Ana' }] });
    const added = await ok(ana, ['comment', 'add', ...MIX, 'love it']);
    expect(added.stdout.trim()).toMatch(/^Commented on mix v1 at whole mix \([0-9a-f]{8}\)$/);

    // A comment is named by the first characters of its id, as band comment list shows them.
    const reply = await ok(ana, ['comment', 'reply', range.id.slice(0, 8), 'fixed in v2', '--mention', 'Ben']);
    expect(reply.stdout).toContain("Replied to Ben's comment at 0:00.250–0:02.000");
    expect((await ok(ben, ['comment', 'resolve', range.id.slice(0, 5)])).stdout).toContain("Resolved Ben's comment at 0:00.250–0:02.000");
    const tooShort = plain(await ana.band(['comment', 'resolve', range.id.slice(0, 3)]));
    expect([tooShort.exitCode, tooShort.stderr]).toEqual([2, `error: "${range.id.slice(0, 3)}" is not a comment id (the id, or its first characters as band comment list shows them)\n`]);
    const unknown = plain(await ana.band(['comment', 'resolve', 'FFFFFFFF']));
    expect([unknown.exitCode, unknown.stderr]).toEqual([6, 'error: no comment of your projects has an id starting with ffffffff\n']);

    const listed = await json<Comment[]>(ana, ['comment', 'list', ...MIX]);
    const api = await anaSdk.comments.list(mix.id, { versions: 'this' }).pages()[Symbol.asyncIterator]().next();
    expect(listed).toEqual(api.value!.comments);
    expect(listed.map((c) => c.atMs)).toEqual([250, 1500, null]);
    expect(listed[0]!.replies).toMatchObject([{ body: 'fixed in v2', mentions: [{ name: 'Ben' }] }]);

    const human = (await ok(ana, ['comment', 'list', ...MIX])).stdout.split('\n');
    expect(human[0]).toMatch(new RegExp(`^0:00\\.250–0:02\\.000  Ben  resolved by Ben  v1  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  ${range.id.slice(0, 8)}$`));
    expect(human[1]).toBe('    vocals drift  (to Ana)');
    expect(human[2]).toMatch(/^ {4}↳ Ana {2}\d{4}-/);
    expect(human[3]).toBe('      fixed in v2  (to Ben)');
    expect(human[4]).toMatch(/^0:01\.500  Ana  open  v1 /);
    expect(human).toContain('2 open, 1 resolved');
    // --limit takes the first threads, in pages no longer than asked for, and says the rest were left out; the counts stay whole.
    const two = await ana.band(['comment', 'list', ...MIX, '--limit', '2']);
    expect(two.stderr).toBe('the first 2 threads; --limit <n> or --all for more\n');
    expect(two.stdout).toContain('2 open, 1 resolved');
    expect(JSON.parse((await ok(ana, ['comment', 'list', ...MIX, '--limit', '2', '--json'])).stdout).map((c: Comment) => c.id)).toEqual(listed.slice(0, 2).map((c) => c.id));
    expect((await ana.band(['comment', 'list', ...MIX, '--limit', '3'])).stderr).toBe('');

    const open = await json<Comment[]>(ana, ['comment', 'list', mix.id, '--status', 'open']);
    expect(open.map((c) => c.id)).not.toContain(range.id);
    await ok(ana, ['comment', 'reopen', range.id]);
    expect((await json<Comment[]>(ana, ['comment', 'list', mix.id, '--status', 'open'])).map((c) => c.id)).toContain(range.id);

    const edited = await json<Comment>(ana, ['comment', 'edit', point.id, 'snare and hats too loud', '--at', '0:01.750']);
    expect(edited).toMatchObject({ body: 'snare and hats too loud', atMs: 1750, edited: true });
    const notYours = plain(await ben.band(['comment', 'edit', point.id, 'mine now']));
    expect(notYours.exitCode).toBe(1);

    const refused = plain(await ana.band(['comment', 'delete', point.id]));
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('refusing without --yes');
    expect((await ok(ana, ['comment', 'delete', point.id, '--yes'])).stdout.trim()).toMatch(
      new RegExp(`^Moved the comment at 0:01\\.750 to the trash until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC \\(band trash restore ${point.id}\\)$`),
    );
    const thread = await ok(ben, ['comment', 'delete', range.id, '--yes']);
    expect(thread.stdout).toContain('Moved the comment at 0:00.250–0:02.000 and its reply to the trash until');
    expect((await ok(ana, ['comment', 'list', ...MIX])).stdout).not.toContain('vocals drift');
  });

  it('lists the inbox of a cut or a project, and only what mentions you with --mine', async () => {
    const mentioned = await json<Comment>(ben, ['comment', 'add', mix.id, 'ana, check the bridge', '--at', '2', '--mention', 'Ana']);
    const cut = await json<Comment[]>(ana, ['comment', 'list', '--cut', 'Final', '--vibe', 'Mixes', '--project', 'Demo']);
    expect(cut.map((c) => c.id)).toContain(mentioned.id);
    const mine = await json<Comment[]>(ana, ['comment', 'list', '--project', 'Demo', '--mine']);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((c) => c.mentions.some((m) => m.name === 'Ana') || c.replies?.some((r) => r.mentions.some((m) => m.name === 'Ana')))).toBe(true);
    expect(mine.map((c) => c.id)).toContain(mentioned.id);
    const human = (await ok(ana, ['comment', 'list', '--project', 'Demo', '--mine'])).stdout;
    expect(human).toMatch(/^Final \/ mix {2}0:02\.000 {2}Ben {2}open/m);
    expect(plain(await ana.band(['comment', 'list', ...MIX, '--mine'])).exitCode).toBe(2);
    expect(plain(await ana.band(['comment', 'list'])).exitCode).toBe(2);
  });

  it('refuses times it cannot read, and --to without --at, as usage errors before asking the server', async () => {
    const typo = plain(await ana.band(['comment', 'add', mix.id, 'x', '--at', '1:75']));
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain('--at: "1:75" is not a time like 83, 83.5s, 1:23, 1:23.450 or 1:02:03');
    const end = plain(await ana.band(['comment', 'add', mix.id, 'x', '--to', '2']));
    expect(end.exitCode).toBe(2);
    expect(end.stderr).toContain('--to ends a range: give its start with --at');
    expect(plain(await ana.band(['comment', 'export', mix.id, '--format', 'mp3'])).exitCode).toBe(2);
  });

  it('shows escape sequences and bidirectional controls in bodies and names as visible text, never to the terminal', async () => {
    const hostile = await json<Comment>(ben, ['comment', 'add', mix.id, 'placeholder', '--at', '2.5']);
    // The server refuses control characters in bodies and names; a hostile server would not.
    await server.sql`update comments set body = ${'red\u001b[31m alert\u001b]52;c;ZXZpbA==\u0007 take\u202evaw.exe'} where id = ${hostile.id}`;
    await server.sql`update users set name = ${'Ben\u001b[2K\u202e'} where email = 'ben@example.com'`;
    try {
      const shown = await ok(ana, ['comment', 'list', mix.id]);
      expect(shown.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      expect(shown.stdout).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
      expect(shown.stdout).toContain('    red\\x1b[31m alert\\x1b]52;c;ZXZpbA==\\x07 take\\u202evaw.exe');
      expect(shown.stdout).toContain('Ben\\x1b[2K\\u202e  open');
      const inbox = await ok(ana, ['comment', 'list', '--cut', 'Final', '--project', 'Demo']);
      expect(inbox.stdout).toContain('take\\u202evaw.exe');
      expect(inbox.stdout).not.toMatch(/[\u001b\u202e]/);
      // --json keeps the exact strings, escaped as JSON.
      const records = await json<Comment[]>(ana, ['comment', 'list', mix.id]);
      expect(records.find((c) => c.id === hostile.id)!.body).toBe('red\u001b[31m alert\u001b]52;c;ZXZpbA==\u0007 take\u202evaw.exe');
    } finally {
      await server.sql`update users set name = 'Ben' where email = 'ben@example.com'`;
      await server.sql`delete from comments where id = ${hostile.id}`;
    }
  });

  it('exports markers: <file name>.<ext> here by default, never over a file without --force, or to stdout', async () => {
    const timed = await json<Comment>(ana, ['comment', 'add', mix.id, 'export me', '--at', '1']);
    await json<Comment>(ben, ['comment', 'reply', timed.id, 'agreed']);
    const here = { cwd: ana.home };
    const saved = await ok(ana, ['comment', 'export', ...MIX, '--format', 'midi'], here);
    expect(saved.stdout.trim()).toMatch(/^Saved the comments of mix as MIDI markers to mix\.mid \(\d+ B\)$/);
    // A format of timed markers says what it could not hold (the whole-mix comments and replies the tests before left).
    const threads = await json<Comment[]>(ana, ['comment', 'list', mix.id, '--status', 'all']);
    const wholeMix = threads.filter((c) => !c.deleted && c.atMs === null).length;
    const replies = threads.flatMap((c) => c.replies ?? []).filter((r) => !r.deleted).length;
    expect(wholeMix).toBeGreaterThan(0);
    expect(replies).toBeGreaterThan(0);
    expect(saved.stderr).toBe(
      `Left out ${wholeMix} whole-mix comment${wholeMix === 1 ? '' : 's'} and ${replies} repl${replies === 1 ? 'y' : 'ies'}: markers have a time and no thread (--format csv or json keeps them)\n`,
    );
    const midi = await readFile(path.join(ana.home, 'mix.mid'));
    expect(midi.subarray(0, 4).toString('latin1')).toBe('MThd');
    expect(midi.toString('latin1')).toContain('Ana: export me');
    const again = plain(await ana.band(['comment', 'export', ...MIX, '--format', 'midi'], here));
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('mix.mid already exists; add --force');
    await ok(ana, ['comment', 'export', ...MIX, '--format', 'midi', '--force'], here);
    // A WAV of markers beside the mix it marks: not mix.wav.
    expect((await ok(ana, ['comment', 'export', ...MIX, '--format', 'wav'], here)).stdout).toContain('to mix.markers.wav (');
    expect((await readFile(path.join(ana.home, 'mix.markers.wav'))).subarray(0, 4).toString('latin1')).toBe('RIFF');

    const csv = await ok(ana, ['comment', 'export', mix.id, '--format', 'csv', '--offset', '2s', '--status', 'open', '-o', '-']);
    expect(csv.stdout.split('\r\n')[0]).toBe('#,Start,End,Author,Comment,Status,Version');
    expect(csv.stdout).toContain('0:00:03.000,,Ana,export me,open,1');
    expect(csv.stderr).not.toContain('Left out');
    const markers = JSON.parse((await ok(ana, ['comment', 'export', mix.id, '--format', 'json', '--offset', '0:01.5', '-o', '-'])).stdout);
    expect(markers).toMatchObject({ file: { id: mix.id }, offsetMs: 1500 });
    expect(markers.markers).toContainEqual(expect.objectContaining({ atMs: 2500, name: 'Ana: export me' }));
  });
});

describe('band review', () => {
  it('approves, requests changes, withdraws, and says in status what keeps the version from release (exit 7)', async () => {
    const notYet = plain(await ana.band(['review', 'status', ...MIX]));
    expect(notYet.exitCode).toBe(7);
    expect(notYet.stdout).toContain('No reviews yet');
    // The project's default policy: one approval and no open comment.
    expect(notYet.stderr.trim()).toMatch(/^error: mix is not ready: 0 of 1 approval; \d+ open comments?$/);

    expect((await ok(ana, ['review', 'approve', ...MIX, '--note', 'ship it'])).stdout.trim()).toBe('Approved mix: ship it');
    expect((await ok(ben, ['review', 'request-changes', mix.id, '--note', 'vocals 1 dB up'])).stdout.trim()).toBe('Requested changes to mix: vocals 1 dB up');
    const blocked = plain(await ana.band(['review', 'status', mix.id, '--require', '2', '--no-open-comments']));
    expect(blocked.exitCode).toBe(7);
    expect(blocked.stderr.trim()).toMatch(/^error: mix is not ready: 1 of 2 approvals; changes requested by Ben; \d+ open comments?$/);
    expect(blocked.stdout).toMatch(/^Ana\s+approved\s+.*ship it$/m);

    expect((await ok(ben, ['review', 'withdraw', mix.id])).stdout.trim()).toBe('Withdrew your review of mix');
    // No flag: the project's review policy decides (by default one approval and no open comment).
    const byPolicy = plain(await ana.band(['review', 'status', mix.id]));
    expect(byPolicy.exitCode).toBe(7);
    expect(byPolicy.stderr.trim()).toMatch(/^error: mix is not ready: \d+ open comments?$/);
    const withOpenComments = await ok(ana, ['review', 'status', mix.id, '--open-comments']);
    expect(withOpenComments.stderr.trim()).toBe('mix is ready: 1 approval');
    const status = await json<{ fileId: string; ready: boolean } & ReviewList>(ana, ['review', 'status', mix.id, '--open-comments']);
    expect(status).toEqual({ fileId: mix.id, ready: true, required: { approvals: 1, noOpenComments: false }, ...(await anaSdk.reviews.list(mix.id)) });
    // A policy that lets open comments pass: ready without a flag, as the server's summary says; a flag still overrides it.
    const updated = await anaSdk.projects.update(projectId, { reviewPolicy: { noOpenComments: false } });
    expect(updated.reviewPolicy).toEqual({ approvals: 1, noOpenComments: false });
    expect(await json(ana, ['review', 'status', mix.id])).toMatchObject({ ready: true, required: { approvals: 1, noOpenComments: false }, summary: { ready: true } });
    expect(plain(await ana.band(['review', 'status', mix.id, '--require', '2'])).exitCode).toBe(7);
    // The policy from the command line: the project's ADMIN sets it, `project show` says it, status follows it.
    expect((await json<{ reviewPolicy: unknown }>(ana, ['project', 'update', 'Demo', '--review-approvals', '2'])).reviewPolicy).toEqual({ approvals: 2, noOpenComments: false });
    expect((await ok(ana, ['project', 'show', 'Demo'])).stdout).toContain('Review policy: 2 approvals, no request for changes\n');
    expect(plain(await ana.band(['review', 'status', mix.id])).stderr.trim()).toBe('error: mix is not ready: 1 of 2 approvals');
    expect(plain(await ana.band(['project', 'update', 'Demo', '--review-approvals', 'x'])).exitCode).toBe(2);
    expect(plain(await ana.band(['project', 'update', 'Demo', '--review-no-open-comments', '--review-allow-open-comments'])).exitCode).toBe(2);
    await ok(ana, ['project', 'update', 'Demo', '--review-approvals', '1', '--review-no-open-comments']);
    expect((await anaSdk.projects.get(projectId)).reviewPolicy).toEqual({ approvals: 1, noOpenComments: true });
    expect(plain(await ana.band(['review', 'status', mix.id, '--require', 'two'])).exitCode).toBe(2);
  });

  it('is a release gate for CI: the built binary exits 7 until the version is approved and no comment is open, then 0', async () => {
    const gate = ['review', 'status', mix.id, '--require', '2', '--no-open-comments'];
    const failed = await ben.bandProcess(gate);
    expect(failed.exitCode).toBe(7);
    expect(failed.stderr).toMatch(/^error: mix is not ready: 1 of 2 approvals; \d+ open comments?\n$/);

    await ok(ben, ['review', 'approve', mix.id]);
    for await (const comment of anaSdk.comments.list(mix.id, { status: 'open' })) await anaSdk.comments.resolve(comment.id);
    const passed = await ben.bandProcess(gate);
    expect(passed.stderr).toBe('mix is ready: 2 approvals\n');
    expect(passed.exitCode).toBe(0);
  });
});

describe('help and completion', () => {
  it('documents every comment and review command with examples, and completes them', async () => {
    const runs = [
      ['comment'],
      ...['add', 'list', 'reply', 'resolve', 'reopen', 'edit', 'delete', 'export'].map((verb) => ['comment', verb]),
      ['review'],
      ...['approve', 'request-changes', 'withdraw', 'status'].map((verb) => ['review', verb]),
    ];
    for (const words of runs) {
      const help = await ok(ana, [...words, '--help']);
      expect(help.stdout, words.join(' ')).toMatch(/Examples:\n {2}\$ /);
    }
    const help = (await ok(ana, ['--help'])).stdout;
    expect(help).toMatch(/^ {2}comment {2,}comment on moments of a mix/m);
    expect(help).toMatch(/^ {2}review {2,}approve a version or request changes/m);
    expect((await ok(ana, ['help', 'exit-codes'])).stdout).toContain('band review status found the');

    const script = path.join(ana.home, 'band.bash');
    await writeFile(script, (await ok(ana, ['completion', 'bash'])).stdout);
    const complete = async (...words: string[]) => {
      const { stdout } = await promisify(execFile)('bash', [
        '-c',
        `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _band; echo "\${COMPREPLY[*]}"`,
      ]);
      return stdout.trim().split(' ');
    };
    expect(await complete('band', 'comment', 're')).toEqual(['reply', 'resolve', 'reopen']);
    expect(await complete('band', 'comment', 'export', '--for')).toEqual(['--format', '--force']);
    expect(await complete('band', 'review', 'status', '--no-o')).toEqual(['--no-open-comments']);
    expect(await complete('band', 'rev')).toEqual(['review']);
  });
});
