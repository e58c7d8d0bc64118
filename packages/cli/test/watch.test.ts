import { type ChildProcess, spawn } from 'node:child_process';
import type { ProjectEvent } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inviteToken } from '../../server/test/authz/fixture.js';
import { analysed } from '../../server/test/support/files.js';
import { client } from '../../server/test/support/http.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { ANSI, BAND, type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

let server: TestServer;
let ana: CliUser;
let ben: Awaited<ReturnType<ReturnType<typeof client>['register']>>;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com', 'correct horse battery', 'Ana');
  ben = await api.register({ name: 'Ben' });
});
afterAll(async () => {
  await ana?.cleanup();
  await server?.close();
});

async function asBen<T = any>(method: string, path: string, json?: unknown): Promise<T> {
  const response = await api.request<T>(method, path, { token: ben.accessToken, json });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
  return response.body;
}

/**
 * `email` accepts an invitation link in a session of its own (as from another device), so the CLI's stored
 * session is left alone. On a server whose access tokens live one second, a slow machine can see the new
 * token expire before the accept arrives: then it signs in again.
 */
async function acceptAs(baseUrl: string, email: string, inviteUrl: string): Promise<void> {
  const other = client(baseUrl);
  for (let attempt = 1; ; attempt++) {
    const session = await other.request('POST', '/api/auth/login', { json: { email, password: 'correct horse battery' } });
    const accepted = await other.request('POST', '/api/invitations/accept', { token: session.body.accessToken, json: { token: inviteToken(inviteUrl) } });
    if (accepted.status === 200) return;
    if (accepted.body.code !== 'TOKEN_EXPIRED' || attempt === 5) throw new Error(`accept: ${accepted.status} ${accepted.text}`);
  }
}

/** A project of Ben's with Ana in it, and a cut to upload to. */
async function sharedCut(projectName: string): Promise<{ projectId: string; cutId: string }> {
  const project = await asBen('POST', '/api/projects', { name: projectName });
  const { inviteUrl } = await asBen('POST', `/api/projects/${project.id}/invite`, { email: 'ana@example.com', role: 'MEMBER' });
  await acceptAs(server.url, 'ana@example.com', inviteUrl);
  const vibe = await asBen('POST', `/api/projects/${project.id}/vibes`, { name: 'Verse' });
  const cut = await asBen('POST', `/api/vibes/${vibe.id}/cuts`, { name: 'Take 1' });
  return { projectId: project.id, cutId: cut.id };
}

async function benUploads(cutId: string, name: string): Promise<void> {
  const form = new FormData();
  form.set('cutId', cutId);
  form.set('file', new Blob([new Uint8Array(wavBytes(7))]), name);
  const response = await api.request('POST', '/api/files/upload', { token: ben.accessToken, body: form });
  if (response.status !== 201) throw new Error(`upload: ${response.status} ${response.text}`);
}

/** `band watch` running in the background, as a user leaves it in a terminal tab. */
function startWatch(user: CliUser, args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [BAND, 'watch', ...args], { env: user.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const until = async (check: () => boolean, what: string) => {
    const deadline = Date.now() + 15_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`band watch: no ${what}; stdout: ${stdout}; stderr: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  return { child, exited, until, stdout: () => stdout, stderr: () => stderr };
}

describe('band watch', () => {
  it("prints another user's upload as one JSON object per line with --json, and ends on Ctrl-C", async () => {
    const { projectId, cutId } = await sharedCut('Demo');
    const watch = startWatch(ana, ['--json']);
    await watch.until(() => /watching 1 project/.test(watch.stderr()), 'hello');

    await benUploads(cutId, 'take.wav');
    // The upload, then its analysis's end: the test waits for both, since the second can follow the first at once.
    await watch.until(() => watch.stdout().split('\n').length === 3, 'two event lines');
    const events = watch.stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as ProjectEvent);
    expect(events[0]).toMatchObject({ type: 'file.uploaded', projectId, actor: { id: ben.user.id, name: 'Ben' }, data: { file: { name: 'take.wav', type: 'CUT', cutId } } });
    expect(events[1]).toMatchObject({ type: 'file.analyzed', projectId });

    watch.child.kill('SIGINT');
    expect(await watch.exited).toBe(130);
  });

  it('says when an action came through a personal access token, by the token’s name', async () => {
    const { cutId } = await sharedCut('Released');
    const { token } = await asBen<{ token: string }>('POST', '/api/tokens', { name: 'github-release', scope: 'write', expiresIn: 3600 });
    const watch = startWatch(ana, ['--project', 'Released']);
    await watch.until(() => /watching 1 project/.test(watch.stderr()), 'hello');

    const form = new FormData();
    form.set('cutId', cutId);
    form.set('file', new Blob([new Uint8Array(wavBytes(7))]), 'ci.wav');
    expect((await api.request('POST', '/api/files/upload', { token, body: form })).status).toBe(201);
    await benUploads(cutId, 'by-hand.wav');
    await watch.until(() => watch.stdout().includes('by-hand'), 'both uploads');
    // Each upload's file.analyzed line may come between or after them: this test is about the uploads' actors.
    const lines = watch
      .stdout()
      .trimEnd()
      .split('\n')
      .map((line) => line.replace(/^.* UTC {2}Released {2}/, ''))
      .filter((line) => !line.startsWith('file.analyzed'));
    expect(lines).toEqual([
      'file.uploaded  Ben (token "github-release") uploaded "ci.wav" to cut "Take 1" (audio, 4.0 KiB)',
      'file.uploaded  Ben uploaded "by-hand.wav" to cut "Take 1" (audio, 4.0 KiB)',
    ]);

    watch.child.kill('SIGINT');
    await watch.exited;
  });

  it('prints one plain line per event of the --project it is given, and nothing of the others', async () => {
    const watched = await sharedCut('Watched');
    const other = await sharedCut('Other');
    const watch = startWatch(ana, ['--project', 'Watched']);
    await watch.until(() => /watching 1 project/.test(watch.stderr()), 'hello');

    await benUploads(other.cutId, 'elsewhere.wav');
    await benUploads(watched.cutId, 'mix.wav');
    // The upload's line, then its analysis's: neither of the other project's upload.
    await watch.until(() => watch.stdout().includes('analysed'), 'event lines');
    const lines = watch.stdout().trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC {2}Watched {2}file\.uploaded {2}Ben uploaded "mix.wav" to cut "Take 1" \(audio, 4\.0 KiB\)$/);
    expect(lines[1]).toMatch(/ UTC {2}Watched {2}file\.analyzed {2}.*"mix\.wav" analysed: /);
    expect(watch.stdout()).not.toMatch(ANSI);

    watch.child.kill('SIGINT');
    await watch.exited;
  });

  it('names the vibes, cuts, files and members an event refers to (never their ids), in lines timed in UTC', async () => {
    const { projectId, cutId } = await sharedCut('Named');
    const chorus = await asBen('POST', `/api/projects/${projectId}/vibes`, { name: 'Chorus' });
    const cal = await api.register({ name: 'Cal' });
    const { inviteUrl } = await asBen('POST', `/api/projects/${projectId}/invite`, { email: cal.user.email, role: 'MEMBER' });
    await api.request('POST', '/api/invitations/accept', { token: cal.accessToken, json: { token: inviteToken(inviteUrl) } });
    await benUploads(cutId, 'mix.wav');
    const files = await asBen<{ files: { id: string }[] }>('GET', `/api/cuts/${cutId}`);
    const fileId = files.files[0]!.id;
    // Its analysis done before the watch starts: its file.analyzed event is not one of the lines below.
    await analysed(api, ben.accessToken, fileId);
    const watch = startWatch(ana, ['--project', 'Named']);
    await watch.until(() => /watching 1 project/.test(watch.stderr()), 'hello');

    await asBen('POST', `/api/files/${fileId}/share`, {});
    await asBen('PUT', `/api/cuts/${cutId}/move`, { targetVibeId: chorus.id });
    await asBen('DELETE', `/api/files/${fileId}`);
    await asBen('DELETE', `/api/cuts/${cutId}`);
    const verse = (await asBen<{ vibes: { id: string; name: string }[] }>('GET', `/api/projects/${projectId}`)).vibes.find((v) => v.name === 'Verse')!;
    await asBen('DELETE', `/api/vibes/${verse.id}`);
    await asBen('DELETE', `/api/projects/${projectId}/members/${cal.user.id}`);
    await watch.until(() => watch.stdout().includes('removed'), 'the last event');

    const lines = watch.stdout().trimEnd().split('\n');
    expect(lines.map((line) => line.replace(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC {2}Named {2}/, ''))).toEqual([
      'file.shared  Ben shared file "mix.wav" (no expiry)',
      'cut.moved  Ben moved cut "Take 1" from "Verse" to "Chorus"',
      'file.trashed  Ben moved file "mix.wav" to the trash',
      'cut.trashed  Ben moved cut "Take 1" to the trash',
      'vibe.trashed  Ben moved vibe "Verse" to the trash',
      'member.removed  Ben removed Cal',
    ]);
    expect(watch.stdout()).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);

    watch.child.kill('SIGINT');
    await watch.exited;
  });

  it('ends with exit code 4 when the session is logged out', async () => {
    const user = await cliUser(server.url);
    try {
      await registerWithCli(user, 'eve@example.com', 'correct horse battery', 'Eve');
      const watch = startWatch(user, []);
      await watch.until(() => /watching 0 projects/.test(watch.stderr()), 'hello');
      expect((await user.band(['auth', 'logout'])).exitCode).toBe(0);
      expect(await watch.exited).toBe(4);
      expect(watch.stderr()).toMatch(/error: The session has ended; sign in again/);
    } finally {
      await user.cleanup();
    }
  });

  it('keeps watching across a reconnection that finds the stored access token expired', async () => {
    const shortLived = await startTestServer();
    const user = await cliUser(shortLived.url);
    try {
      await registerWithCli(user, 'cleo@example.com', 'correct horse battery', 'Cleo');
      const watch = startWatch(user, ['--json']);
      await watch.until(() => /watching 0 projects/.test(watch.stderr()), 'hello');
      shortLived.clock.advance(shortLived.config.accessTokenTtlSeconds + 1); // the access token expires
      // Dropping the server's LISTEN connection makes it ask every socket to reconnect (1012).
      await shortLived.sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen%'`;
      await watch.until(() => (watch.stderr().match(/watching 0 projects/g) ?? []).length === 2, 'second hello');
      expect(watch.stderr()).toMatch(/connection lost \(1012\)/);

      const other = client(shortLived.url);
      const dan = await other.register({ name: 'Dan' });
      const project = await other.request('POST', '/api/projects', { token: dan.accessToken, json: { name: 'Late' } });
      const invited = await other.request('POST', `/api/projects/${project.body.id}/invite`, { token: dan.accessToken, json: { email: 'cleo@example.com', role: 'MEMBER' } });
      await acceptAs(shortLived.url, 'cleo@example.com', invited.body.inviteUrl);
      await watch.until(() => watch.stdout().includes('member.added'), 'event after the reconnection');
      expect(JSON.parse(watch.stdout().trimEnd().split('\n').at(-1)!)).toMatchObject({ type: 'member.added', projectId: project.body.id });
      watch.child.kill('SIGINT');
      await watch.exited;
    } finally {
      await user.cleanup();
      await shortLived.close();
    }
  });
});
