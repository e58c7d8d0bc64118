import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { CutWithFiles, FileRecord, InviteResult, Project, ProjectDetail, ShareLink, StorageStats, Vibe } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { ANSI, apiGet, type CliUser, cliUser, type RunResult, registerWithCli, wavBytes } from './support/cli.js';

// Each test runs many commands against a real server; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 90_000 });

let server: TestServer;
let ana: CliUser;
let ben: CliUser;
let anaToken: string;
let work: string;

/** Every command's output off a terminal: plain text, never a colour code or a spinner frame. */
function plain(result: RunResult): RunResult {
  expect(result.stdout).not.toMatch(ANSI);
  expect(result.stderr).not.toMatch(ANSI);
  expect(result.stderr).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
  return result;
}

async function ok(user: CliUser, args: string[]): Promise<RunResult> {
  const result = plain(await user.band(args));
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
  anaToken = (await ok(ana, ['auth', 'token'])).stdout.trim();
  work = await mkdtemp(path.join(os.tmpdir(), 'band-work-'));
});
afterAll(async () => {
  await ana?.cleanup();
  await ben?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

describe('band project', () => {
  it('creates, lists, shows, updates and deletes, with --json matching the API records', async () => {
    const created = await json<Project>(ana, ['project', 'create', 'Summer EP', '--description', 'Rehearsals']);
    expect(created).toMatchObject({ name: 'Summer EP', description: 'Rehearsals', role: 'ADMIN', memberCount: 1 });

    const listed = await json<Project[]>(ana, ['project', 'list']);
    expect(listed).toEqual(await apiGet<Project[]>(server.url, '/api/projects', anaToken));
    const table = await ok(ana, ['project', 'list']);
    expect(table.stdout).toMatch(/^NAME\s+ROLE\s+MEMBERS\s+CREATED\s+ID$/m);
    expect(table.stdout).toContain(created.id);

    const shown = await json<ProjectDetail>(ana, ['project', 'show', 'summer ep']);
    expect(shown).toEqual(await apiGet<ProjectDetail>(server.url, `/api/projects/${created.id}`, anaToken));

    const updated = await json<Project>(ana, ['project', 'update', 'Summer EP', '--name', 'Summer EP 2026', '--description', '']);
    expect(updated).toMatchObject({ id: created.id, name: 'Summer EP 2026', description: null });

    const refused = plain(await ana.band(['project', 'delete', 'Summer EP 2026']));
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('refusing without --yes (not a terminal)');
    expect(await json(ana, ['project', 'delete', 'Summer EP 2026', '--yes'])).toEqual({ id: created.id, deleted: true });

    const missing = plain(await ana.band(['project', 'show', 'Summer EP 2026']));
    expect(missing.exitCode).toBe(6);
    expect(missing.stderr.trim()).toBe('error: no project named "Summer EP 2026" among your projects');
    const missingId = plain(await ana.band(['project', 'show', created.id]));
    expect(missingId.exitCode).toBe(6);
  });

  it('sets and removes a cover image', async () => {
    const png = path.join(work, 'cover.png');
    await writeFile(png, Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(64)]));
    const created = await json<Project>(ana, ['project', 'create', 'Covered', '--image', png]);
    expect(created.imageUrl).toMatch(/^\/uploads\/images\/.+\.png$/);
    expect((await json<Project>(ana, ['project', 'update', 'Covered', '--remove-image'])).imageUrl).toBeNull();
    expect(plain(await ana.band(['project', 'update', 'Covered'])).exitCode).toBe(2);
  });

  it('refuses an ambiguous name and lists the candidates', async () => {
    const first = await json<Project>(ana, ['project', 'create', 'Twin']);
    const second = await json<Project>(ana, ['project', 'create', 'twin']);
    const result = plain(await ana.band(['project', 'show', 'TWIN']));
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('"TWIN" names 2 projects among your projects; use an id');
    expect(result.stderr).toContain(first.id);
    expect(result.stderr).toContain(second.id);
    expect((await json<ProjectDetail>(ana, ['project', 'show', second.id])).name).toBe('twin');
  });
});

describe('band member, vibe, cut', () => {
  let project: Project;

  beforeAll(async () => {
    project = await json<Project>(ana, ['project', 'create', 'Band Room']);
  });

  it('invites a member by a link they accept, changes the role, and removes them', async () => {
    const human = await ok(ana, ['member', 'invite', 'ben@example.com', '--project', 'Band Room']);
    const [sendLine, link] = human.stdout.trimEnd().split('\n');
    expect(sendLine).toMatch(/^Send this link to ben@example\.com; it lets them join as MEMBER until \d{4}-\d\d-\d\d \d\d:\d\d UTC:$/);
    expect(link).toMatch(new RegExp(`^${server.config.publicUrl}/invite/[\\w-]{43}$`));
    expect(plain(await ben.band(['project', 'show', 'Band Room'])).exitCode).toBe(6);

    const offer = await json<{ projectName: string; role: string }>(ben, ['invitation', 'show', link!]);
    expect(offer).toMatchObject({ projectName: 'Band Room', invitedBy: { name: 'Ana' }, role: 'MEMBER' });
    expect((await ok(ben, ['invitation', 'accept', link!])).stdout).toBe('Joined Band Room as MEMBER\n');
    const usedUp = plain(await ben.band(['invitation', 'accept', link!]));
    expect(usedUp.exitCode).toBe(6);

    const pending = await json<InviteResult>(ana, ['member', 'invite', 'cleo@example.com', '--project', 'Band Room', '--role', 'admin']);
    expect(pending).toMatchObject({ status: 'invited', invitation: { email: 'cleo@example.com', role: 'ADMIN' }, inviteUrl: expect.stringContaining('/invite/') });
    const notCleo = plain(await ben.band(['invitation', 'accept', pending.inviteUrl]));
    expect(notCleo.exitCode).toBe(1);
    expect(notCleo.stderr).toMatch(/another email/);
    expect(await json(ana, ['member', 'revoke-invite', 'cleo@example.com', '--project', 'Band Room'])).toEqual({ id: pending.invitation.id, deleted: true });
    expect(plain(await ana.band(['member', 'revoke-invite', 'cleo@example.com', '--project', 'Band Room'])).exitCode).toBe(6);

    expect(await json(ana, ['member', 'role', 'Ben', 'ADMIN', '--project', 'Band Room'])).toMatchObject({ email: 'ben@example.com', role: 'ADMIN' });
    expect((await json<Project[]>(ben, ['project', 'list'])).map((p) => p.name)).toContain('Band Room');

    expect((await ana.band(['member', 'remove', 'ben@example.com', '--project', 'Band Room'])).exitCode).toBe(2);
    await ok(ana, ['member', 'remove', 'ben@example.com', '--project', 'Band Room', '--yes']);
    expect(plain(await ben.band(['project', 'show', 'Band Room'])).exitCode).toBe(6);
  });

  it('registers with --invite and joins the project in the same step', async () => {
    const { inviteUrl } = await json<InviteResult>(ana, ['member', 'invite', 'dora@example.com', '--project', 'Band Room']);
    const dora = await cliUser(server.url);
    try {
      const registered = plain(
        await dora.band(['auth', 'register', '--email', 'dora@example.com', '--name', 'Dora', '--password-stdin', '--invite', inviteUrl], { input: 'correct horse battery\n' }),
      );
      expect(registered.exitCode, registered.stderr).toBe(0);
      expect(registered.stdout).toMatch(/^Registered \(and accepted the invitation\) and logged in to /);
      expect((await json<Project[]>(dora, ['project', 'list'])).map((p) => p.name)).toEqual(['Band Room']);
    } finally {
      await dora.cleanup();
    }
  });

  it('creates, renames, reorders and deletes vibes and cuts by name', async () => {
    const verse = await json<Vibe>(ana, ['vibe', 'create', 'Verse', '--project', 'Band Room']);
    await json<Vibe>(ana, ['vibe', 'create', 'Chorus', '--project', 'Band Room']);
    await json<Vibe>(ana, ['vibe', 'create', 'Bridge', '--project', 'Band Room']);
    expect(await json(ana, ['vibe', 'rename', 'verse', 'Verse 1', '--project', 'Band Room'])).toMatchObject({ id: verse.id, name: 'Verse 1' });

    const reordered = await json<{ vibes: Vibe[] }>(ana, ['vibe', 'reorder', 'Bridge', '--project', 'Band Room']);
    expect(reordered.vibes.map((v) => [v.name, v.position])).toEqual([
      ['Bridge', 0],
      ['Verse 1', 1],
      ['Chorus', 2],
    ]);

    const cut = await json<CutWithFiles>(ana, ['cut', 'create', 'Take 1', '--vibe', 'Verse 1', '--project', 'Band Room']);
    expect(cut).toMatchObject({ name: 'Take 1', vibeId: verse.id, projectId: project.id });
    await ok(ana, ['cut', 'rename', 'take 1', 'Take 1 (keeper)', '--project', 'Band Room']);
    const moved = await json<CutWithFiles>(ana, ['cut', 'move', 'Take 1 (keeper)', '--vibe', 'Verse 1', '--to', 'Chorus', '--project', 'Band Room']);
    const chorus = (await json<ProjectDetail>(ana, ['project', 'show', 'Band Room'])).vibes.find((v) => v.name === 'Chorus')!;
    expect(moved.vibeId).toBe(chorus.id);

    await json<CutWithFiles>(ana, ['cut', 'create', 'Take 1 (keeper)', '--vibe', 'Bridge', '--project', 'Band Room']);
    const ambiguous = plain(await ana.band(['cut', 'delete', 'take 1 (keeper)', '--project', 'Band Room', '--yes']));
    expect(ambiguous.exitCode).toBe(2);
    expect(ambiguous.stderr).toContain('Chorus / Take 1 (keeper)');
    expect(ambiguous.stderr).toContain('Bridge / Take 1 (keeper)');

    expect(await json(ana, ['cut', 'delete', 'Take 1 (keeper)', '--vibe', 'Chorus', '--project', 'Band Room', '--yes'])).toEqual({ id: cut.id, deleted: true });
    expect(await json(ana, ['vibe', 'delete', 'Verse 1', '--project', 'Band Room', '--yes'])).toEqual({ id: verse.id, deleted: true });
  });
});

describe('band vibe and cut: names taken', () => {
  it('prints the server’s refusal of a vibe or cut name already taken and exits 1', async () => {
    await json(ana, ['project', 'create', 'Names']);
    await json(ana, ['vibe', 'create', 'Intro', '--project', 'Names']);
    const vibeTaken = plain(await ana.band(['vibe', 'create', 'intro', '--project', 'Names']));
    expect(vibeTaken.exitCode).toBe(1);
    expect(vibeTaken.stderr.trim()).toMatch(/^error: A vibe named "intro" already exists in this project \(request id [\w-]+\)$/);

    await json(ana, ['vibe', 'create', 'Outro', '--project', 'Names']);
    await json(ana, ['cut', 'create', 'Take', '--vibe', 'Intro', '--project', 'Names']);
    await json(ana, ['cut', 'create', 'TAKE', '--vibe', 'Outro', '--project', 'Names']);
    const moveTaken = plain(await ana.band(['cut', 'move', 'Take', '--vibe', 'Intro', '--to', 'Outro', '--project', 'Names']));
    expect(moveTaken.exitCode).toBe(1);
    expect(moveTaken.stderr.trim()).toMatch(/^error: The target vibe already has a cut of this name; rename one of them first \(request id [\w-]+\)$/);

    await json(ana, ['cut', 'create', 'Other', '--vibe', 'Outro', '--project', 'Names']);
    const renameTaken = plain(await ana.band(['cut', 'rename', 'Other', 'take', '--vibe', 'Outro', '--project', 'Names']));
    expect(renameTaken.exitCode).toBe(1);
    expect(renameTaken.stderr.trim()).toMatch(/^error: A cut named "take" already exists in this vibe \(request id [\w-]+\)$/);
    await ok(ana, ['cut', 'rename', 'TAKE', 'Take', '--vibe', 'Outro', '--project', 'Names']);
  });
});

describe('band file and band storage', () => {
  let cut: CutWithFiles;

  beforeAll(async () => {
    await json(ana, ['project', 'create', 'Files']);
    await json(ana, ['vibe', 'create', 'Mixes', '--project', 'Files']);
    cut = await json<CutWithFiles>(ana, ['cut', 'create', 'Final', '--vibe', 'Mixes', '--project', 'Files']);
  });

  it('uploads, lists, shows, downloads, shares, unshares and deletes a file', async () => {
    const local = path.join(work, 'mix.wav');
    await writeFile(local, wavBytes(1, 20_000));
    const where = ['--cut', 'Final', '--vibe', 'Mixes', '--project', 'Files'];
    const [uploaded] = await json<FileRecord[]>(ana, ['file', 'upload', local, ...where, '--name', 'Master mix']);
    expect(uploaded).toMatchObject({ name: 'Master mix', type: 'CUT', size: 20_012, mimeType: 'audio/wav', cutId: cut.id });

    // The server's analysis of these bytes (they only look like WAV) may fail them between two reads.
    const analysing = (file: FileRecord) => ({ ...file, analysis: expect.stringMatching(/^(pending|failed)$/) });
    expect(await json<FileRecord[]>(ana, ['file', 'list', ...where])).toEqual((await apiGet<CutWithFiles>(server.url, `/api/cuts/${cut.id}`, anaToken)).files.map(analysing));
    expect(await json<FileRecord>(ana, ['file', 'info', 'master mix', ...where])).toEqual(analysing(uploaded!));

    const target = path.join(work, 'copy.wav');
    await ok(ana, ['file', 'download', uploaded!.id, '-o', target]);
    expect(await readFile(target)).toEqual(await readFile(local));

    const link = await json<ShareLink>(ana, ['file', 'share', uploaded!.id, '--expires', '7d']);
    expect(new Date(link.expiresAt!).getTime() - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    const shared = await fetch(`${server.url}/api/share/${link.token}`);
    expect(Buffer.from(await shared.arrayBuffer())).toEqual(await readFile(local));
    expect(plain(await ana.band(['file', 'share', uploaded!.id, '--expires', 'soon'])).exitCode).toBe(2);

    // The URL alone on stdout, to capture in a script; when it expires on stderr.
    const printed = plain(await ana.band(['file', 'share', uploaded!.id, '--feedback', '--follow', 'latest', '--expires', '30d']));
    expect(printed.stdout).toMatch(/^http:\/\/\S+\/share\/\S+\n$/);
    expect(printed.stderr).toMatch(/^expires \d{4}-\d{2}-\d{2} /);
    const feedback = { token: printed.stdout.trim().split('/').pop()! };
    expect(await (await fetch(`${server.url}/api/share/${feedback.token}`, { headers: { accept: 'application/json' } })).json()).toMatchObject({ allowComments: true, follow: 'latest' });
    const feedbackId = (await apiGet<{ id: string }[]>(server.url, `/api/files/${uploaded!.id}/shares`, anaToken)).at(-1)!.id;
    expect(await json(ana, ['share', 'close-comments', feedbackId])).toEqual({ id: feedbackId, commentsClosed: true });
    const guest = (body: string) =>
      fetch(`${server.url}/api/share/${feedback.token}/comments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Lee', body }) });
    expect((await guest('closed')).status).toBe(403);
    expect(plain(await ana.band(['share', 'reopen-comments', feedbackId])).stdout).toBe(`Link ${feedbackId} takes comments again\n`);
    expect((await guest('open again')).status).toBe(201);

    expect(await json(ana, ['file', 'unshare', uploaded!.id])).toEqual({ revoked: 2 });
    expect((await fetch(`${server.url}/api/share/${link.token}`)).status).toBe(404);

    expect(await json(ana, ['file', 'delete', uploaded!.id, '--yes'])).toEqual({ id: uploaded!.id, deleted: true });
    expect(plain(await ana.band(['file', 'info', uploaded!.id])).exitCode).toBe(6);
  });

  it('downloads into a directory under the display name, adding the stored extension only when the name lacks it', async () => {
    const local = path.join(work, 'take.wav');
    await writeFile(local, wavBytes(2, 5_000));
    const where = ['--cut', 'Final', '--vibe', 'Mixes', '--project', 'Files'];
    const [named] = await json<FileRecord[]>(ana, ['file', 'upload', local, ...where]);
    const [renamed] = await json<FileRecord[]>(ana, ['file', 'upload', local, ...where, '--name', 'Take two', '--duplicate']);
    expect(named!.name).toBe('take.wav');
    const into = await mkdtemp(path.join(work, 'downloads-'));
    await ok(ana, ['file', 'download', named!.id, '-o', into]);
    await ok(ana, ['file', 'download', renamed!.id, '-o', into]);
    expect((await readdir(into)).sort()).toEqual(['Take two.wav', 'take.wav']);
    expect(await readFile(path.join(into, 'take.wav'))).toEqual(await readFile(local));
    for (const file of [named!, renamed!]) await ok(ana, ['file', 'delete', file.id, '--yes']);
  });

  it('shows storage in human sizes, with the site block for a site admin only', async () => {
    await writeFile(path.join(work, 'stats.wav'), wavBytes(2, 3 * 1024 * 1024));
    await ok(ana, ['file', 'upload', path.join(work, 'stats.wav'), '--cut', cut.id]);
    const stats = await json<StorageStats>(ana, ['storage']);
    expect(stats).toEqual(await apiGet<StorageStats>(server.url, '/api/files/storage', anaToken));
    const human = await ok(ana, ['storage']);
    expect(human.stdout).toMatch(/^audio\s+3\.0 MiB\s+1$/m);
    expect(human.stdout).toContain('Whole site:');
    const benHuman = await ok(ben, ['storage']);
    expect(benHuman.stdout).toMatch(/^total\s+0 B\s+0$/m);
    expect(benHuman.stdout).not.toContain('Whole site');
  });
});

describe('band completion and help', () => {
  it('prints completion scripts that complete commands and flags', async () => {
    const bash = (await ok(ana, ['completion', 'bash'])).stdout;
    const script = path.join(work, 'band.bash');
    await writeFile(script, bash);
    const complete = async (...words: string[]) => {
      const { stdout } = await promisify(execFile)('bash', [
        '-c',
        `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _band; echo "\${COMPREPLY[*]}"`,
      ]);
      return stdout.trim().split(' ');
    };
    expect(await complete('band', 'fi')).toEqual(['file']);
    expect(await complete('band', '--profile', 'x', 'file', 'up')).toEqual(['upload']);
    expect(await complete('band', 'file', 'upload', '--du')).toEqual(['--duplicate']);
    expect((await ok(ana, ['completion', 'zsh'])).stdout).toContain('compdef _band band');
    expect((await ok(ana, ['completion', 'fish'])).stdout).toContain("complete -c band -f -n 'test (__band_path) = \"file\"' -a 'upload list info versions download preview share unshare delete'");
    expect(plain(await ana.band(['completion', 'tcsh'])).exitCode).toBe(2);
  });

  it('has --help with examples on every command', async () => {
    const groups: Record<string, string[]> = {
      auth: ['register', 'login', 'link', 'logout', 'status', 'token'],
      project: ['list', 'create', 'show', 'update', 'delete'],
      member: ['invite', 'revoke-invite', 'role', 'remove'],
      invitation: ['accept', 'show'],
      vibe: ['create', 'rename', 'delete', 'reorder'],
      cut: ['create', 'rename', 'move', 'delete'],
      file: ['upload', 'list', 'info', 'download', 'share', 'unshare', 'delete'],
      storage: [],
      token: ['create', 'list', 'revoke'],
      share: ['list', 'revoke', 'close-comments', 'reopen-comments'],
      publish: [],
      completion: [],
    };
    const runs = Object.entries(groups).flatMap(([group, verbs]) => [[group], ...verbs.map((verb) => [group, verb])]);
    const results = await Promise.all(runs.map((words) => ana.band([...words, '--help'])));
    results.forEach((result, i) => {
      expect(result.exitCode, runs[i]!.join(' ')).toBe(0);
      expect(result.stdout, runs[i]!.join(' ')).toMatch(/Examples:\n {2}\$ /);
    });
  });
});
