// band push / band pull (§16) as a band uses them: a real server, two folders standing for two musicians'
// machines; band runs in-process, and as the built binary where a run is killed. Bytes are measured at the
// server (its storage statistics count every stored version).
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CutWithFiles, FileRecord, StorageStats } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { apiGet, BAND, type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

const IO_PROBE = fileURLToPath(new URL('./support/io-probe.mjs', import.meta.url));

vi.setConfig({ testTimeout: 120_000 });

const MiB = 1024 * 1024;
const CUT = 'Demo/Verse/Take 3';
const NFD_NAME = 'Audio/Cafe\u0301 take.wav';

let server: TestServer;
let ria: CliUser;
let token: string;
let work: string;
/** Ria's session folder and the copy on her bandmate's machine. */
let riaDir: string;
let benDir: string;
let cutId: string;

/** What Ria's folder holds that is never pushed: ignored by default or by her .bandignore, and the .bandignore itself. */
const NOT_SENT = ['Backup/song [2026-11-27].als', 'Audio/Take 1.asd', 'Cache/peaks.dat', '.bandignore', '.git/config'];

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const band = (args: string[]) => ria.band(args);
const storage = () => apiGet<StorageStats>(server.url, '/api/files/storage', token);
const latest = async () => (await apiGet<CutWithFiles>(server.url, `/api/cuts/${cutId}?latest=true`, token)).files;
const put = async (dir: string, relative: string, bytes: Buffer | string) => {
  await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
  await writeFile(path.join(dir, relative), bytes);
};

/** Runs band as a process and answers, beside its result, how many bytes it read (its /proc/self/io `rchar`). */
async function bandReading(args: string[]): Promise<{ exitCode: number | null; stderr: string; bytesRead: number }> {
  const probe = path.join(work, `io-${randomBytes(4).toString('hex')}`);
  const result = await ria.bandProcess(args, { env: { NODE_OPTIONS: `--import ${IO_PROBE}`, BAND_IO_PROBE: probe } });
  const bytesRead = Number(/^rchar: (\d+)$/m.exec(await readFile(probe, 'utf8'))![1]);
  return { ...result, bytesRead };
}

/** Every file under `dir` but band's own state, relative paths with their sha256. */
async function contents(dir: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const relative = path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    if (!relative.startsWith('.band/')) found[relative.normalize('NFC')] = sha256(await readFile(path.join(dir, relative)));
  }
  return found;
}

beforeAll(async () => {
  server = await startTestServer();
  ria = await cliUser(server.url);
  await registerWithCli(ria, 'ria@example.com');
  token = (await ria.band(['auth', 'token'])).stdout.trim();
  await ria.band(['project', 'create', 'Demo']);
  await ria.band(['vibe', 'create', 'Verse', '--project', 'Demo']);
  cutId = JSON.parse((await ria.band(['cut', 'create', 'Take 3', '--vibe', 'Verse', '--project', 'Demo', '--json'])).stdout).id;
  work = await mkdtemp(path.join(os.tmpdir(), 'band-session-'));
  riaDir = path.join(work, 'ria');
  benDir = path.join(work, 'ben');
  // A session: a project file, a take, 200 small clips in nested folders, an NFD name (as macOS writes them),
  // what DAWs leave beside them: backups, analysis files, and a cache ignored by .bandignore (which stays here),
  // and a git repository holding a credential.
  await put(riaDir, 'song.als', randomBytes(3000));
  await put(riaDir, 'Audio/Take 1.wav', wavBytes(1, 64 * 1024));
  for (let i = 0; i < 200; i += 1) await put(riaDir, `Audio/Clips/${Math.floor(i / 50)}/clip-${i}.wav`, wavBytes(i + 10, 200));
  await put(riaDir, NFD_NAME, wavBytes(2, 1000));
  await put(riaDir, 'Backup/song [2026-11-27].als', 'old');
  await put(riaDir, 'Audio/Take 1.asd', 'analysis');
  await put(riaDir, 'Cache/peaks.dat', randomBytes(500));
  await put(riaDir, '.bandignore', 'Cache/\n');
  await put(riaDir, '.git/config', '[credential]\n\thelper = store\n');
});
afterAll(async () => {
  await ria?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

describe('band push and band pull', () => {
  it('pushes a session folder: every file with its path, the project file as SESSION, ignored files, .git/ and .bandignore left out', async () => {
    const pushed = await band(['push', riaDir, '--cut', CUT]);
    expect(pushed.stderr).toMatch(/Pushed 203 files/);
    expect(pushed.exitCode).toBe(0);
    const files = await latest();
    const paths = files.map((file) => file.path).sort();
    expect(paths).toHaveLength(203);
    expect(paths).toContain('Audio/Café take.wav'.normalize('NFC'));
    expect(paths.filter((p) => /Backup|\.asd|Cache|\.git|\.bandignore/.test(p!))).toEqual([]);
    expect(files.find((file) => file.path === 'song.als')).toMatchObject({ type: 'SESSION', sha256: sha256(await readFile(path.join(riaDir, 'song.als'))) });
  });

  it('a second push with nothing changed sends nothing and reads no file', async () => {
    const before = await storage();
    const manifestWritten = (await stat(path.join(riaDir, '.band/manifest.json'))).mtimeMs;
    const again = await band(['push', riaDir, '--cut', CUT]);
    expect(again.exitCode).toBe(0);
    // Nor is anything written: the manifest stays as the last run left it.
    expect((await stat(path.join(riaDir, '.band/manifest.json'))).mtimeMs).toBe(manifestWritten);
    expect(again.stderr).toMatch(/^Up to date: nothing to push; 203 unchanged or left alone; 0 files read to hash$/m);
    expect(again.stderr).not.toMatch(/pushing|Pushed/);
    expect(await storage()).toEqual(before);
  });

  it('pulls the cut into a new folder on the other machine, byte for byte', async () => {
    const pulled = await band(['pull', CUT, benDir]);
    expect(pulled.stderr).toMatch(/Pulled 203 files/);
    expect(pulled.exitCode).toBe(0);
    const expected = await contents(riaDir);
    for (const ignored of NOT_SENT) delete expected[ignored];
    expect(await contents(benDir)).toEqual(expected);
    const again = await band(['pull', CUT, benDir]);
    expect(again.stderr).toMatch(/^Up to date: nothing to pull; 203 unchanged or left alone; 0 files read to hash$/m);
    expect(again.stderr).not.toMatch(/pulling|Pulled/);
  });

  it('an edit on one side goes over as the next version', async () => {
    const edited = randomBytes(3100);
    await put(riaDir, 'song.als', edited);
    const before = await storage();
    expect((await band(['push', riaDir, '--cut', CUT])).stderr).toMatch(/Pushed 1 file \(3\.0 KiB\)/);
    expect((await storage()).fileCount).toBe(before.fileCount + 1);
    expect((await latest()).find((file) => file.path === 'song.als')!.series.version).toBe(2);
    expect((await band(['pull', CUT, benDir])).exitCode).toBe(0);
    expect(sha256(await readFile(path.join(benDir, 'song.als')))).toBe(sha256(edited));
  });

  it('a new file is read once (to upload it); a changed one twice: to hash it, to upload it (If-None-Match takes that hash)', async () => {
    const size = 16 * MiB;
    const take = (seed: number) => Buffer.concat([wavBytes(seed, 64), randomBytes(size - 76)]);
    // What a push reads besides files (its code, its settings, the answers of the server): the baseline.
    const idle = await bandReading(['push', riaDir, '--cut', CUT]);
    expect(idle.exitCode).toBe(0);

    await put(riaDir, 'Audio/Long take.wav', take(7));
    const added = await bandReading(['push', riaDir, '--cut', CUT]);
    expect(added.stderr).toMatch(/Pushed 1 file.*0 files read to hash/);
    expect((added.bytesRead - idle.bytesRead) / size).toBeGreaterThan(0.9);
    expect((added.bytesRead - idle.bytesRead) / size).toBeLessThan(1.2);
    expect((await latest()).find((file) => file.path === 'Audio/Long take.wav')!.sha256).toBe(sha256(await readFile(path.join(riaDir, 'Audio/Long take.wav'))));

    // A version of an existing series goes with If-None-Match: the hash the push took, not a third read.
    await put(riaDir, 'Audio/Long take.wav', take(8));
    const changed = await bandReading(['push', riaDir, '--cut', CUT]);
    expect(changed.stderr).toMatch(/Pushed 1 file/);
    expect((await latest()).find((file) => file.path === 'Audio/Long take.wav')!.series.version).toBe(2);
    expect((changed.bytesRead - idle.bytesRead) / size).toBeGreaterThan(1.9);
    expect((changed.bytesRead - idle.bytesRead) / size).toBeLessThan(2.2);
  });

  it('an edit on both sides is a conflict: push skips it, pull writes the cut\'s version beside it, both exit 3', async () => {
    const rias = wavBytes(3, 64 * 1024);
    const bens = wavBytes(4, 64 * 1024);
    await put(riaDir, 'Audio/Take 1.wav', rias);
    expect((await band(['push', riaDir, '--cut', CUT])).exitCode).toBe(0);
    await put(benDir, 'Audio/Take 1.wav', bens);

    const push = await band(['push', benDir, '--cut', CUT]);
    expect(push.exitCode).toBe(3);
    expect(push.stderr).toMatch(/conflict\s+Audio\/Take 1\.wav\s+changed here and on the cut \(v2\)/);
    expect((await latest()).find((file) => file.path === 'Audio/Take 1.wav')!.sha256).toBe(sha256(rias));

    const pull = await band(['pull', CUT, benDir]);
    expect(pull.exitCode).toBe(3);
    expect(sha256(await readFile(path.join(benDir, 'Audio/Take 1.wav')))).toBe(sha256(bens));
    expect(sha256(await readFile(path.join(benDir, 'Audio/Take 1.band-conflict-v2.wav')))).toBe(sha256(rias));

    // The conflict is seen: Ben's next push sends his take as version 3; the conflict copy, left where it is,
    // stays home (ignored by default).
    const resolved = await band(['push', benDir, '--cut', CUT]);
    expect(resolved.stderr).toMatch(/Pushed 1 file/);
    expect(resolved.exitCode).toBe(0);
    const take = (await latest()).find((file) => file.path === 'Audio/Take 1.wav')!;
    expect(take).toMatchObject({ sha256: sha256(bens), series: { version: 3 } });
    expect((await latest()).map((file) => file.path)).not.toContain('Audio/Take 1.band-conflict-v2.wav');
    await unlink(path.join(benDir, 'Audio/Take 1.band-conflict-v2.wav'));
    expect((await band(['pull', CUT, riaDir])).exitCode).toBe(0);
  });

  it('deletes only with --delete, within --max-delete, and plans it with --dry-run --json', async () => {
    await unlink(path.join(riaDir, 'Audio/Clips/0/clip-1.wav'));
    await unlink(path.join(riaDir, 'Audio/Clips/0/clip-2.wav'));
    // Without --delete the run names each deletion it leaves alone, and the flag that would carry it over.
    const kept = await band(['push', riaDir, '--cut', CUT]);
    expect(kept.exitCode).toBe(0);
    expect(kept.stderr).toMatch(/skip\s+Audio\/Clips\/0\/clip-1\.wav\s+deleted here \(--delete deletes it on the cut\)/);
    expect(kept.stderr).toMatch(/skip\s+Audio\/Clips\/0\/clip-2\.wav\s+deleted here \(--delete deletes it on the cut\)/);
    expect(kept.stderr).toMatch(/^Nothing pushed; 2 deletions left alone \(see above\); \d+ unchanged or left alone; 0 files read to hash$/m);
    expect(kept.stderr).not.toMatch(/Up to date/);
    expect((await latest()).map((file) => file.path)).toContain('Audio/Clips/0/clip-1.wav');

    const dry = await band(['push', riaDir, '--cut', CUT, '--delete', '--dry-run', '--json']);
    expect(dry.exitCode).toBe(0);
    const { actions } = JSON.parse(dry.stdout) as { actions: { path: string; action: string; reason: string }[] };
    expect(actions.filter((action) => action.action !== 'skip')).toEqual([
      { path: 'Audio/Clips/0/clip-1.wav', action: 'delete', reason: 'deleted here' },
      { path: 'Audio/Clips/0/clip-2.wav', action: 'delete', reason: 'deleted here' },
    ]);
    const limited = await band(['push', riaDir, '--cut', CUT, '--delete', '--max-delete', '1']);
    expect(limited.exitCode).toBe(1);
    expect(limited.stderr).toMatch(/would delete 2 files, more than --max-delete 1/);
    expect((await latest()).map((file) => file.path)).toContain('Audio/Clips/0/clip-2.wav');

    expect((await band(['push', riaDir, '--cut', CUT, '--delete'])).exitCode).toBe(0);
    expect((await latest()).map((file) => file.path)).not.toContain('Audio/Clips/0/clip-1.wav');

    // Ben's pull without --delete names them too, and leaves his copies.
    const notMoved = await band(['pull', CUT, benDir]);
    expect(notMoved.exitCode).toBe(0);
    expect(notMoved.stderr).toMatch(/skip\s+Audio\/Clips\/0\/clip-1\.wav\s+deleted on the cut \(--delete moves it to \.band\/trash\/\)/);
    expect(notMoved.stderr).toMatch(/^Nothing pulled; 2 deletions left alone \(see above\);/m);
    expect((await contents(benDir))['Audio/Clips/0/clip-1.wav']).toBeDefined();

    // On Ben's side they go to .band/trash/, not away.
    expect((await band(['pull', CUT, benDir, '--delete'])).exitCode).toBe(0);
    expect((await contents(benDir))['Audio/Clips/0/clip-1.wav']).toBeUndefined();
    const trash = await readdir(path.join(benDir, '.band/trash'), { recursive: true });
    expect(trash.filter((name) => name.endsWith('clip-1.wav'))).toHaveLength(1);
  });

  it('an empty or missing folder is refused, nothing deleted (exit 1)', async () => {
    const empty = path.join(work, 'empty');
    await put(empty, '.DS_Store', 'x');
    const refused = await band(['push', empty, '--cut', CUT, '--delete']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/nothing deleted/);
    expect((await band(['push', path.join(work, 'missing'), '--cut', CUT, '--delete'])).exitCode).toBe(1);
  });

  it('a rename moves the series; a case-only rename is reported until --force moves it; the other side renames its file without downloading it', async () => {
    const seriesOf = async (p: string) => (await latest()).find((file) => file.path === p)!.series;
    const clip = await seriesOf('Audio/Clips/1/clip-50.wav');
    const song = await seriesOf('song.als');
    await rename(path.join(riaDir, 'Audio/Clips/1/clip-50.wav'), path.join(riaDir, 'Audio/best clip.wav'));
    await rename(path.join(riaDir, 'song.als'), path.join(riaDir, 'Song.als'));
    const pushed = await band(['push', riaDir, '--cut', CUT]);
    expect(pushed.stderr).toMatch(/renamed from Audio\/Clips\/1\/clip-50\.wav/);
    expect(pushed.stderr).toMatch(/skip\s+Song\.als\s+differs only in case from song\.als on the cut: not pushed \(rename it back, as pull does, or --force renames it on the cut\)/);
    expect(pushed.exitCode).toBe(3);
    expect((await seriesOf('Audio/best clip.wav')).id).toBe(clip.id);
    // Not merged into the series as its next version: the cut still has song.als as it was.
    expect(await seriesOf('song.als')).toEqual(song);

    const forced = await band(['push', riaDir, '--cut', CUT, '--force']);
    expect(forced.stderr).toMatch(/upload\s+Song\.als\s+renamed from song\.als/);
    expect(forced.exitCode).toBe(0);
    expect((await seriesOf('Song.als')).id).toBe(song.id);
    expect((await latest()).map((file) => file.path)).not.toContain('song.als');

    const pulled = await band(['pull', CUT, benDir]);
    expect(pulled.stderr).toMatch(/Pulled 2 files \(0 B\)/);
    expect(pulled.exitCode).toBe(0);
    const ben = await contents(benDir);
    expect(ben['Audio/best clip.wav']).toBeDefined();
    expect(ben['Audio/Clips/1/clip-50.wav']).toBeUndefined();
    expect(ben['Song.als']).toBeDefined();
    expect(ben['song.als']).toBeUndefined();
  });

  it('names that differ only in case are reported and skipped (exit 3)', async () => {
    await put(riaDir, 'Audio/Twin.wav', wavBytes(5, 100));
    await put(riaDir, 'Audio/twin.wav', wavBytes(6, 100));
    const twins = await band(['push', riaDir, '--cut', CUT]);
    expect(twins.exitCode).toBe(3);
    expect(twins.stderr).toMatch(/differ only in case or Unicode normalisation/);
    expect((await latest()).map((file) => file.path?.toLowerCase())).not.toContain('audio/twin.wav');
    await unlink(path.join(riaDir, 'Audio/twin.wav'));
  });

  it('a folder that mirrors another cut is refused (exit 2, naming both)', async () => {
    const other = JSON.parse((await ria.band(['cut', 'create', 'Take 4', '--vibe', 'Verse', '--project', 'Demo', '--json'])).stdout).id;
    const refused = await band(['push', riaDir, '--cut', other]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`mirrors cut ${cutId}`);
    expect(refused.stderr).toContain(`not cut ${other}`);
  });

  it('a push killed with -9 in the middle of a large take finishes on the next run, resuming where it stopped', async () => {
    // Resumable from 8 MiB (RESUMABLE_MIN_BYTES); killed after 4 MiB, far from its end.
    const take = randomBytes(32 * MiB);
    take.write('RIFF', 0, 'latin1');
    take.write('WAVE', 8, 'latin1');
    await put(riaDir, 'Audio/Take 2.wav', take);
    const child = spawn(process.execPath, [BAND, 'push', riaDir, '--cut', CUT], { env: ria.env, stdio: 'ignore' });
    const resumable = path.join(server.dataDir, 'resumable');
    const received = async () => {
      const names = await readdir(resumable).catch(() => [] as string[]);
      const sizes = await Promise.all(names.map((name) => stat(path.join(resumable, name)).then((s) => s.size, () => 0)));
      return Math.max(0, ...sizes);
    };
    while ((await received()) < 4 * MiB && child.exitCode === null) await new Promise((resolve) => setImmediate(resolve));
    expect(child.exitCode).toBeNull();
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(await readFile(path.join(riaDir, '.band/lock'), 'utf8')).toMatch(/^\d+ ticks \d+\n$/);

    const rerun = await band(['push', riaDir, '--cut', CUT]);
    expect(rerun.stderr).toMatch(/resuming Audio\/Take 2\.wav at/);
    expect(rerun.exitCode).toBe(0);
    expect((await latest()).find((file) => file.path === 'Audio/Take 2.wav')!.sha256).toBe(sha256(take));
  });
});

describe('band push --delete by a MEMBER', () => {
  it("deletes the series they uploaded; another member's is reported and kept, on the cut and in the manifest (exit 3)", async () => {
    const invite = JSON.parse((await ria.band(['member', 'invite', 'ben@example.com', '--project', 'Demo', '--json'])).stdout) as { inviteUrl: string };
    const ben = await cliUser(server.url);
    try {
      await registerWithCli(ben, 'ben@example.com');
      expect((await ben.band(['invitation', 'accept', invite.inviteUrl])).exitCode).toBe(0);
      const take5 = 'Demo/Verse/Take 5';
      const take5Id = JSON.parse((await ria.band(['cut', 'create', 'Take 5', '--vibe', 'Verse', '--project', 'Demo', '--json'])).stdout).id;
      const riasDir = path.join(work, 'ria-take5');
      await put(riasDir, 'song.als', randomBytes(100));
      await put(riasDir, 'Audio/ria.wav', wavBytes(20, 100));
      expect((await band(['push', riasDir, '--cut', take5])).exitCode).toBe(0);

      const bensDir = path.join(work, 'ben-take5');
      expect((await ben.bandProcess(['pull', take5, bensDir])).exitCode).toBe(0);
      await put(bensDir, 'Audio/ben.wav', wavBytes(21, 100));
      expect((await ben.bandProcess(['push', bensDir, '--cut', take5])).exitCode).toBe(0);
      await unlink(path.join(bensDir, 'Audio/ria.wav'));
      await unlink(path.join(bensDir, 'Audio/ben.wav'));

      const pushed = await ben.bandProcess(['push', bensDir, '--cut', take5, '--delete', '--max-delete', '2']);
      expect(pushed.stderr).toMatch(/Audio\/ria\.wav: not deleted on the cut: /);
      expect(pushed.stderr).toMatch(/deleted 1; .*1 failed/);
      expect(pushed.exitCode).toBe(3);
      const paths = (await apiGet<CutWithFiles>(server.url, `/api/cuts/${take5Id}?latest=true`, token)).files.map((file) => file.path).sort();
      expect(paths).toEqual(['Audio/ria.wav', 'song.als']);
      const manifest = JSON.parse(await readFile(path.join(bensDir, '.band/manifest.json'), 'utf8')) as { files: Record<string, unknown> };
      expect(Object.keys(manifest.files).sort()).toEqual(['Audio/ria.wav', 'song.als']);
    } finally {
      await ben.cleanup();
    }
  });
});

describe('band pull killed with -9', () => {
  it('leaves no partial file in the folder, and the next run finishes the job', async () => {
    const carlDir = path.join(work, 'carl');
    const child = spawn(process.execPath, [BAND, 'pull', CUT, carlDir, '--jobs', '1'], { env: ria.env, stdio: 'ignore' });
    // The bytes of the large take received so far, wherever the pull writes them.
    const partial = async () => {
      const names = await readdir(path.join(carlDir, '.band/tmp')).catch(() => [] as string[]);
      const places = [...names.map((name) => path.join(carlDir, '.band/tmp', name)), path.join(carlDir, 'Audio/Take 2.wav')];
      const sizes = await Promise.all(places.map((place) => stat(place).then((s) => s.size, () => 0)));
      return Math.max(0, ...sizes);
    };
    while ((await partial()) < 4 * MiB && child.exitCode === null) await new Promise((resolve) => setImmediate(resolve));
    expect(child.exitCode).toBeNull();
    child.kill('SIGKILL');
    await once(child, 'exit');
    const expected = await contents(riaDir);
    for (const ignored of NOT_SENT) delete expected[ignored];
    // Whatever is in the folder is whole: each file has the bytes it has on Ria's side.
    for (const [relative, hash] of Object.entries(await contents(carlDir))) expect(hash, relative).toBe(expected[relative]);
    expect(expected['Audio/Take 2.wav']).toBeDefined();

    const rerun = await band(['pull', CUT, carlDir]);
    expect(rerun.exitCode).toBe(0);
    expect(await contents(carlDir)).toEqual(expected);
    expect(await readdir(path.join(carlDir, '.band'))).not.toContain('tmp');
  });
});

/**
 * A server in front of the test server that lists a cut's files at other paths (`relist`) and passes everything
 * else through: what pull sees of a compromised or hostile server.
 */
async function hostileServer(relist: (files: FileRecord[]) => FileRecord[]): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(server.url);
  const proxy = http.createServer((req, res) => {
    const headers = { ...req.headers, host: target.host };
    delete headers['accept-encoding'];
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      if (req.method !== 'GET' || !/^\/api\/cuts\/[^/?]+\?latest=true$/.test(req.url ?? '') || answer.statusCode !== 200) {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const cut = JSON.parse(Buffer.concat(chunks).toString('utf8')) as CutWithFiles;
        const body = JSON.stringify({ ...cut, files: relist(cut.files) });
        const { etag: _etag, ...rest } = answer.headers;
        res.writeHead(200, { ...rest, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => proxy.close(() => resolve())),
  };
}

describe('reserved paths', () => {
  const take6 = 'Demo/Verse/Take 6';
  let take6Id: string;
  let source: string;
  beforeAll(async () => {
    take6Id = JSON.parse((await ria.band(['cut', 'create', 'Take 6', '--vibe', 'Verse', '--project', 'Demo', '--json'])).stdout).id;
    source = path.join(work, 'take6');
    await put(source, 'song.als', randomBytes(100));
  });

  it('push never sends one, not even one a .bandignore takes back: each is named, exit 3', async () => {
    await put(source, '.bandignore', '!.git/\n');
    await put(source, '.git/config', '[credential]\n\thelper = store\n');
    await put(source, 'Audio/CON.wav', wavBytes(30, 100));
    await put(source, 'Audio/take 1: intro.wav', wavBytes(31, 100));
    const pushed = await band(['push', source, '--cut', take6]);
    expect(pushed.stderr).toMatch(/skip\s+\.git\/config\s+not pushed: a path must not have a \.git, \.hg, \.svn or \.band segment/);
    expect(pushed.stderr).toMatch(/skip\s+Audio\/CON\.wav\s+not pushed: a path must not have a segment named after a Windows device/);
    expect(pushed.stderr).toMatch(/skip\s+Audio\/take 1: intro\.wav\s+not pushed: a path must not contain ":"/);
    expect(pushed.exitCode).toBe(3);
    const paths = (await apiGet<CutWithFiles>(server.url, `/api/cuts/${take6Id}?latest=true`, token)).files.map((file) => file.path);
    expect(paths).toEqual(['song.als']);
    for (const relative of ['.bandignore', '.git/config', 'Audio/CON.wav', 'Audio/take 1: intro.wav']) await rm(path.join(source, relative));
  });

  it('pull writes none a server lists, nor any path that leaves the folder: each is named, the rest is pulled, exit 3', async () => {
    const hostile = [
      '.git/config',
      '.GIT/hooks/pre-commit',
      'Audio/.hg/hgrc',
      '.bandignore',
      'NUL.als',
      '../outside.als',
      'Audio/../../outside.als',
      '/tmp/band-absolute.als',
      'Audio\\..\\..\\outside.als',
    ];
    const listing = await hostileServer((files) => {
      const song = files.find((file) => file.path === 'song.als')!;
      return [song, ...hostile.map((where) => ({ ...song, path: where }))];
    });
    try {
      const dir = path.join(work, 'take6-pulled', 'mine');
      const pulled = await ria.band(['pull', take6Id, dir], { env: { BAND_API_URL: listing.url, BAND_TOKEN: token } });
      for (const where of hostile) expect(pulled.stderr).toMatch(new RegExp(`skip\\s+${where.replace(/[.\\/]/g, '\\$&')}\\s+not pulled: a path must`));
      expect(pulled.exitCode).toBe(3);
      expect(Object.keys(await contents(dir))).toEqual(['song.als']);
      expect(await readdir(path.join(work, 'take6-pulled'))).toEqual(['mine']);
      await expect(stat('/tmp/band-absolute.als')).rejects.toThrow();
    } finally {
      await listing.close();
    }
  });
});

describe('symbolic links in the folder', () => {
  const take7 = 'Demo/Verse/Take 7';
  let library: string;
  beforeAll(async () => {
    await ria.band(['cut', 'create', 'Take 7', '--vibe', 'Verse', '--project', 'Demo', '--json']);
    const source = path.join(work, 'take7');
    await put(source, 'song.als', randomBytes(100));
    await put(source, 'Audio Files/take 1.wav', wavBytes(40, 100));
    await put(source, 'Audio Files/take 2.wav', wavBytes(41, 100));
    expect((await band(['push', source, '--cut', take7])).exitCode).toBe(0);
    // A sample library outside the session, which a link in the session points at.
    library = path.join(work, 'library');
    await mkdir(library);
  });

  it('pull writes nothing through a linked folder: each file there is named, the rest is pulled (exit 3)', async () => {
    const dir = path.join(work, 'take7-linked');
    await mkdir(dir);
    await symlink(library, path.join(dir, 'Audio Files'));
    const pulled = await band(['pull', take7, dir]);
    expect(pulled.stderr).toContain('skipped Audio Files: a symbolic link (never followed)');
    expect(pulled.stderr).toMatch(/^error: Audio Files\/take 1\.wav: Audio Files is a symbolic link \(never followed\)$/m);
    expect(pulled.stderr).toMatch(/^error: Audio Files\/take 2\.wav: Audio Files is a symbolic link \(never followed\)$/m);
    expect(pulled.exitCode).toBe(3);
    expect(await readdir(library)).toEqual([]);
    expect(Object.keys(await contents(dir))).toEqual(['song.als']);
    expect(await readdir(path.join(dir, '.band'))).not.toContain('tmp');
  });

  it('a linked .band/ (or a linked .band/trash/) is never written through', async () => {
    const dir = path.join(work, 'take7-state');
    await mkdir(dir);
    await symlink(library, path.join(dir, '.band'));
    const refused = await band(['pull', take7, dir]);
    expect(refused.stderr).toMatch(/\.band is a symbolic link \(never followed\)/);
    expect(refused.exitCode).toBe(1);
    expect(await readdir(library)).toEqual([]);
    expect(await readdir(dir)).toEqual(['.band']);

    // A pull --force that would move a local change to a linked trash keeps the file where it is.
    await unlink(path.join(dir, '.band'));
    expect((await band(['pull', take7, dir])).exitCode).toBe(0);
    await writeFile(path.join(dir, 'song.als'), 'changed here');
    await put(path.join(work, 'take7'), 'song.als', randomBytes(120));
    expect((await band(['push', path.join(work, 'take7'), '--cut', take7])).exitCode).toBe(0);
    await symlink(library, path.join(dir, '.band/trash'));
    const forced = await band(['pull', take7, dir, '--force']);
    expect(forced.stderr).toMatch(/^error: song\.als: \.band\/trash is a symbolic link \(never followed\)$/m);
    expect(forced.exitCode).toBe(3);
    expect(await readFile(path.join(dir, 'song.als'), 'utf8')).toBe('changed here');
    expect(await readdir(library)).toEqual([]);
  });
});
