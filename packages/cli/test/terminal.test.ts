// A real terminal: tmux runs band in a pane; pipe-pane records every byte band drew there.
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runServerCommand } from '../../server/test/support/process.js';
import { requirePrerequisite } from '../../server/test/support/prerequisites.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { ANSI, BAND, type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

vi.setConfig({ testTimeout: 90_000 });

const hasTmux = requirePrerequisite('tmux', spawnSync('sh', ['-c', 'command -v tmux']).status === 0 ? null : 'tmux is not installed (apt-get install tmux)');

describe.skipIf(!hasTmux)('band in a terminal (tmux)', () => {
  const socket = `band-test-${randomBytes(4).toString('hex')}`;
  const tmux = (...args: string[]) => promisify(execFile)('tmux', ['-L', socket, ...args]);
  let server: TestServer;
  let user: CliUser;

  beforeAll(async () => {
    server = await startTestServer();
    user = await cliUser(server.url);
    await registerWithCli(user, 'tia@example.com');
    await user.band(['project', 'create', 'Live']);
    await user.band(['vibe', 'create', 'Takes', '--project', 'Live']);
    await user.band(['cut', 'create', 'One', '--vibe', 'Takes', '--project', 'Live']);
    await mkdir(path.join(user.home, 'takes'));
    for (let i = 0; i < 4; i += 1) await writeFile(path.join(user.home, 'takes', `t${i}.wav`), wavBytes(i, 16 * 1024 * 1024));
  });
  afterAll(async () => {
    await tmux('kill-server').catch(() => undefined);
    await user?.cleanup();
    await server?.close();
  });

  /** Types `band <args>` into a fresh pane; returns the pane and what it shows once `until` appears. */
  const typeInPane = async (pane: string, args: string, until: RegExp) => {
    const env = Object.entries(user.env).map(([key, value]) => `${key}='${value}'`).join(' ');
    await tmux('new-session', '-d', '-s', pane, '-x', '120', '-y', '40', 'sh');
    await tmux('pipe-pane', '-t', pane, '-o', `cat >> ${path.join(user.home, `${pane}.log`)}`);
    await tmux('send-keys', '-t', pane, `cd ${user.home} && env -i ${env} TERM=xterm-256color node ${BAND} ${args}; echo "EXIT=$?"`, 'Enter');
    return waitForScreen(pane, until);
  };
  const waitForScreen = async (pane: string, until: RegExp) => {
    let screen = '';
    for (let i = 0; i < 200 && !until.test(screen); i += 1) {
      await sleep(100);
      screen = (await tmux('capture-pane', '-p', '-t', pane)).stdout;
    }
    return screen;
  };

  it('shows a progress bar per file and one overall, then the summary', async () => {
    const screen = await typeInPane('upload', "file upload 'takes/*.wav' --cut One --vibe Takes --project Live --jobs 2", /EXIT=\d+/);
    expect(screen).toContain('EXIT=0');
    // Finished, the overall bar says so.
    expect(screen).toMatch(/100% \| 4\/4 done \| 64\.0 MiB\/64\.0 MiB/);
    for (let i = 0; i < 4; i += 1) expect(screen).toMatch(new RegExp(`^done {2}t${i}\\.wav$`, 'm'));
    expect(screen).toContain('Uploaded 4 files (64.0 MiB)');

    const drawn = await readFile(path.join(user.home, 'upload.log'), 'utf8');
    expect(drawn).toMatch(ANSI);
    // A file's own bar: "<bar> NN% | <done>/<size> <name>", drawn while it was in flight.
    expect(drawn).toMatch(/[█░]+ \d+% \| [\d.]+ (B|KiB|MiB)\/16\.0 MiB t\d\.wav/);
  });

  it('band push shows the same bars for a session folder, and no bar when it is up to date', async () => {
    await user.band(['cut', 'create', 'Session', '--vibe', 'Takes', '--project', 'Live']);
    const screen = await typeInPane('push', 'push takes --cut Live/Takes/Session --jobs 2', /EXIT=\d+/);
    expect(screen).toContain('EXIT=0');
    expect(screen).toMatch(/100% \| 4\/4 done \| 64\.0 MiB\/64\.0 MiB/);
    expect(screen).toMatch(/^Pushed 4 files \(64\.0 MiB\); deleted 0;/m);
    const drawn = await readFile(path.join(user.home, 'push.log'), 'utf8');
    expect(drawn).toMatch(/[█░]+ \d+% \| [\d.]+ (B|KiB|MiB)\/16\.0 MiB t\d\.wav/);

    const again = await typeInPane('push-again', 'push takes --cut Live/Takes/Session', /EXIT=\d+/);
    expect(again).toContain('EXIT=0');
    expect(again).toMatch(/^Up to date: nothing to push; 4 unchanged or left alone; 0 files read to hash$/m);
    expect(await readFile(path.join(user.home, 'push-again.log'), 'utf8')).not.toMatch(/[█░]/);
  });

  it('styles its own labels, and shows the escapes in a description as text', async () => {
    await user.band(['project', 'create', 'Lit']);
    // The server refuses control characters in a description; a hostile server would not.
    await server.sql`update projects set description = ${'retitled\u001b]0;pwned\u0007 erased\u001b[2K end'} where name = 'Lit'`;
    const screen = await typeInPane('show', 'project show Lit', /EXIT=\d+/);
    expect(screen).toContain('EXIT=0');
    expect(screen).toContain('retitled\\x1b]0;pwned\\x07 erased\\x1b[2K end');
    const drawn = await readFile(path.join(user.home, 'show.log'), 'utf8');
    expect(drawn).toContain('\u001b[1mLit\u001b[22m');
    expect(drawn).not.toContain('\u001b]0;pwned');
  });

  it('asks for email and password (not echoed) and confirms a delete with y', async () => {
    await typeInPane('login', 'auth login', /Email:$/m);
    await tmux('send-keys', '-t', 'login', 'tia@example.com', 'Enter');
    await waitForScreen('login', /Password:$/m);
    await tmux('send-keys', '-t', 'login', 'correct horse battery', 'Enter');
    const loggedIn = await waitForScreen('login', /EXIT=\d+/);
    expect(loggedIn).toContain('EXIT=0');
    expect(loggedIn).toContain('Logged in to');
    expect(loggedIn).not.toContain('correct horse battery');

    await typeInPane('delete', 'project delete Live', /\[y\/N\]$/m);
    await tmux('send-keys', '-t', 'delete', 'y', 'Enter');
    const deleted = await waitForScreen('delete', /EXIT=\d+/);
    expect(deleted).toContain('Moved project Live to the trash until');
    expect(deleted).toContain('EXIT=0');
  });

  it('walks a login with a one-time password (reset-password) through choosing a new one', async () => {
    const reset = await runServerCommand(['reset-password', 'tia@example.com'], server.env);
    expect(reset.code, reset.stderr).toBe(0);
    const oneTime = reset.stdout.trim();
    await typeInPane('reset', 'auth login --email tia@example.com', /Password:$/m);
    // Typed literally (-l): a one-time password may start with '-', which tmux would take for a flag.
    await tmux('send-keys', '-t', 'reset', '-l', '--', oneTime);
    await tmux('send-keys', '-t', 'reset', 'Enter');
    await waitForScreen('reset', /New password:$/m);
    await tmux('send-keys', '-t', 'reset', 'my own password', 'Enter');
    await waitForScreen('reset', /Repeat the new password:$/m);
    await tmux('send-keys', '-t', 'reset', 'my own password', 'Enter');
    const changed = await waitForScreen('reset', /EXIT=\d+/);
    expect(changed).toContain('An admin reset your password: choose your own now.');
    expect(changed).toContain('Password changed');
    expect(changed).toContain('EXIT=0');
    expect(changed).not.toContain('my own password');
    expect((await user.band(['project', 'list'])).exitCode).toBe(0);
  });

  it('registers: states the password rule, asks for it twice, and asks again only for what was refused', async () => {
    await typeInPane('register', '--profile newcomer auth register', /Email:$/m);
    await tmux('send-keys', '-t', 'register', 'noa@example.com', 'Enter');
    await waitForScreen('register', /Name:$/m);
    await tmux('send-keys', '-t', 'register', 'Noa', 'Enter');
    const rule = await waitForScreen('register', /Password:$/m);
    expect(rule).toContain('A password needs at least 8 characters.');
    // Too short: said at once, before it is asked again, and only the password is asked for again.
    await tmux('send-keys', '-t', 'register', 'short', 'Enter');
    const refused = await waitForScreen('register', /must be at least 8 characters[\s\S]*Password:$/m);
    expect(refused).not.toContain('Password again:');
    // Two different answers: asked once more.
    await tmux('send-keys', '-t', 'register', 'correct horse battery', 'Enter');
    await waitForScreen('register', /Password again:$/m);
    await tmux('send-keys', '-t', 'register', 'correct horse batterY', 'Enter');
    await waitForScreen('register', /differ[\s\S]*Password:$/m);
    await tmux('send-keys', '-t', 'register', 'correct horse battery', 'Enter');
    await waitForScreen('register', /Password again:$/m);
    await tmux('send-keys', '-t', 'register', 'correct horse battery', 'Enter');
    const screen = await waitForScreen('register', /EXIT=\d+/);
    expect(screen).toContain('EXIT=0');
    expect(screen).toContain('Registered and logged in');
    // Not the first account of the server (tia was): not its site admin.
    expect(screen).not.toContain('site admin');
    expect(screen).toContain('error: password: must be at least 8 characters\n');
    expect(screen.match(/Email:/g)).toHaveLength(1);
    expect(screen.match(/Name:/g)).toHaveLength(1);
    expect(screen).not.toContain('correct horse');
  });
});
