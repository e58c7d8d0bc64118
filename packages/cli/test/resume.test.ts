// A large upload interrupted with Ctrl-C in a real terminal (tmux), then the same command again: it says
// where it resumes, sends only the rest, and the stored file is the local one byte for byte.
import { execFile, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { requirePrerequisite } from '../../server/test/support/prerequisites.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { BandClient, FileResumeStore } from '@bandcollab/sdk';
import { BAND, type CliUser, cliUser, credentialFile, registerWithCli } from './support/cli.js';

vi.setConfig({ testTimeout: 120_000 });

const MiB = 1024 * 1024;
const hasTmux = requirePrerequisite('tmux', spawnSync('sh', ['-c', 'command -v tmux']).status === 0 ? null : 'tmux is not installed (apt-get install tmux)');

/** A ZIP-looking file of `size` bytes whose content differs at every offset, so a misplaced byte shows. */
function zipBytes(size: number): Buffer {
  const bytes = randomBytes(size);
  bytes.write('PK\x03\x04', 0, 'latin1');
  return bytes;
}

describe.skipIf(!hasTmux)('band resumes an interrupted upload', () => {
  const socket = `band-resume-${randomBytes(4).toString('hex')}`;
  const tmux = (...args: string[]) => promisify(execFile)('tmux', ['-L', socket, ...args]);
  let server: TestServer;
  let user: CliUser;

  beforeAll(async () => {
    server = await startTestServer();
    user = await cliUser(server.url);
    await registerWithCli(user, 'ria@example.com');
    await user.band(['project', 'create', 'Tour']);
    await user.band(['vibe', 'create', 'Live', '--project', 'Tour']);
    await user.band(['cut', 'create', 'Night', '--vibe', 'Live', '--project', 'Tour']);
  });
  afterAll(async () => {
    await tmux('kill-server').catch(() => undefined);
    await user?.cleanup();
    await server?.close();
  });

  const screenOf = async (pane: string) => (await tmux('capture-pane', '-p', '-J', '-S', '-100', '-t', pane)).stdout;
  const waitForScreen = async (pane: string, until: RegExp) => {
    let screen = '';
    for (let i = 0; i < 600 && !until.test(screen); i += 1) {
      await sleep(100);
      screen = await screenOf(pane);
    }
    return screen;
  };
  const typeInPane = async (pane: string, args: string) => {
    const env = Object.entries(user.env).map(([key, value]) => `${key}='${value}'`).join(' ');
    await tmux('new-session', '-d', '-s', pane, '-x', '160', '-y', '50', 'sh');
    await tmux('send-keys', '-t', pane, `cd ${user.home} && env -i ${env} TERM=xterm-256color node ${BAND} ${args}; echo "EXIT=$?"`, 'Enter');
  };
  /** The bytes the server has of the one upload in progress. */
  const receivedOnServer = async () => {
    const dir = path.join(server.dataDir, 'resumable');
    const names = await readdir(dir);
    return names.length === 1 ? (await stat(path.join(dir, names[0]!))).size : 0;
  };

  it('is interrupted with Ctrl-C at ~40 %, then run again: "resuming … at", only the rest, the same sha256', async () => {
    const size = 200 * MiB;
    const bytes = zipBytes(size);
    await writeFile(path.join(user.home, 'session.zip'), bytes);
    const command = 'file upload session.zip --cut Night --vibe Live --project Tour';

    await typeInPane('first', command);
    while ((await receivedOnServer()) < 0.4 * size) await sleep(5);
    await tmux('send-keys', '-t', 'first', 'C-c');
    const interrupted = await waitForScreen('first', /EXIT=\d+/);
    expect(interrupted).toMatch(/EXIT=(130|2)/);
    const stateFiles = await readdir(path.join(user.home, '.config', 'band', 'uploads'));
    expect(stateFiles).toHaveLength(1);

    await typeInPane('second', command);
    const resumed = await waitForScreen('second', /EXIT=\d+/);
    expect(resumed).toContain('EXIT=0');
    const match = /resuming session\.zip at ([\d.]+) MiB/.exec(resumed);
    expect(match, resumed).not.toBeNull();
    const resumedAt = Number(match![1]) * MiB;
    expect(resumedAt).toBeGreaterThan(0.3 * size);
    expect(resumedAt).toBeLessThan(size);
    // The summary counts what this run sent, not the whole file.
    const sent = /Uploaded 1 file \(([\d.]+) MiB\)/.exec(resumed);
    expect(sent, resumed).not.toBeNull();
    expect(Math.abs(Number(sent![1]) * MiB - (size - resumedAt))).toBeLessThan(0.2 * MiB);

    const [file] = await server.sql<{ sha256: string; size: number }[]>`select sha256, size::int as size from files where name = 'session.zip'`;
    expect(file).toEqual({ sha256: createHash('sha256').update(bytes).digest('hex'), size });
    // Completed: the state is forgotten and the server holds no partial bytes.
    expect(JSON.parse(await readFile(path.join(user.home, '.config', 'band', 'uploads', stateFiles[0]!), 'utf8'))).toEqual({});
    expect(await server.sql`select 1 from resumable_uploads where completed_at is null or octet_length(tail) > 0`).toEqual([]);
    expect(await readdir(path.join(server.dataDir, 'resumable'))).toEqual([]);
  });
});

describe('--no-resume', () => {
  let server: TestServer;
  let user: CliUser;

  beforeAll(async () => {
    server = await startTestServer();
    user = await cliUser(server.url);
    await registerWithCli(user, 'noa@example.com');
  });
  afterAll(async () => {
    await user?.cleanup();
    await server?.close();
  });

  it('sends from the first byte with --no-resume; without it, continues what an interrupted run left', async () => {
    const bytes = zipBytes(12 * MiB);
    const file = path.join(user.home, 'set.zip');
    await writeFile(file, bytes);
    const where = ['--cut', 'Late', '--vibe', 'Live', '--project', 'Club', '--create'];
    const first = await user.band(['publish', file, ...where]);
    expect(first.exitCode, first.stderr).toBe(0);
    // An interrupted run, as the CLI leaves it: part of the bytes on the server, the upload in the state file.
    const credentials = credentialFile(user, server.url);
    const tokens = JSON.parse(await readFile(credentials, 'utf8')) as { accessToken: string; refreshToken: string };
    const cutId = (await server.sql<{ cutId: string }[]>`select cut_id as "cutId" from files`)[0]!.cutId;
    const store = new FileResumeStore(path.join(user.home, '.config', 'band', 'uploads', path.basename(credentials)));
    const controller = new AbortController();
    const client = new BandClient({ baseUrl: server.url, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken });
    const interrupted = client.files.upload({
      cutId,
      file,
      resumeStore: store,
      signal: controller.signal,
      onProgress: ({ loaded }) => loaded >= 3 * MiB && controller.abort(),
    });
    await expect(interrupted).rejects.toThrow();
    // The bytes an upload holds are recorded with its offset (parts in the store, the tail in PostgreSQL).
    const waitUntilSaved = async () =>
      (await server.sql`select 1 from resumable_uploads where received > 0 and completed_at is null`).length === 1;
    while (!(await waitUntilSaved())) await sleep(20);

    // band file upload, not publish: a publish of content already on the cut reuses it and sends nothing.
    // --duplicate: the same content is already on the cut, and is wanted twice more here.
    const onTheCut = ['--cut', 'Late', '--vibe', 'Live', '--project', 'Club', '--duplicate'];
    const fresh = await user.band(['file', 'upload', file, ...onTheCut, '--no-resume']);
    expect(fresh.exitCode, fresh.stderr).toBe(0);
    expect(fresh.stderr).not.toContain('resuming');

    const resumed = await user.band(['file', 'upload', file, ...onTheCut]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/resuming set\.zip at [\d.]+ MiB/);
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(await server.sql`select sha256 from files`).toEqual([{ sha256: sha }, { sha256: sha }, { sha256: sha }]);
  });
});
