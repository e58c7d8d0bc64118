import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/exit-codes.js';
import { sha256OfFile } from '../../src/file-hash.js';
import { localState } from '../../src/session/changes.js';
import { type LockHolder, lockFolder, processStart } from '../../src/session/lock.js';
import { checkManifestTarget, readManifest, writeManifest } from '../../src/session/manifest.js';
import { conflictCopyPath, parseCutPath, pathKey } from '../../src/session/paths.js';
import { SafeFolder } from '../../src/session/safe-folder.js';
import { ignoreRules, scanFolder } from '../../src/session/scan.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'band-session-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const folder = () => SafeFolder.open(dir, { create: false });
const put = async (relative: string, text = relative) => {
  await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
  await writeFile(path.join(dir, relative), text);
};

describe('scanFolder', () => {
  it('lists regular files by relative POSIX path, leaves out the defaults (DAW caches, version control), .bandignore and what it names, and never follows a symlink', async () => {
    for (const file of ['.git/config', 'Audio/.hg/hgrc', '.svn/entries', 'Audio/take 1.band-conflict-v3.wav', 'song.band-conflict-v12-2.als', 'song.als', 'Audio/take 1.wav', 'Audio/take 1.asd', 'Backup/song [old].als', 'Session File Backups/s.ptx.bak', 'WaveCache.wfm', 'x.RPP-bak', 'x.rpp', 'x.reapeaks', '.DS_Store', '._song.als', '.band/manifest.json', 'Cache/peaks.dat', 'keep.tmp', 'drop.tmp']) {
      await put(file);
    }
    await put('.bandignore', 'Cache/\n*.tmp\n!keep.tmp\n');
    await mkdir(path.join(dir, 'library'));
    await put('library/sample.wav');
    await symlink(path.join(dir, 'library'), path.join(dir, 'Samples'));
    await symlink(path.join(dir, 'song.als'), path.join(dir, 'link.als'));
    const scan = await scanFolder(dir, await ignoreRules(dir));
    expect(scan.files.map((file) => file.path)).toEqual(['Audio/take 1.wav', 'keep.tmp', 'library/sample.wav', 'song.als', 'x.rpp']);
    expect(scan.symlinks).toEqual(['Samples', 'link.als']);
    expect(scan.ignored).toContain('Audio/take 1.band-conflict-v3.wav');
    expect(scan.ignored).toContain('song.band-conflict-v12-2.als');
    expect(scan.files[0]!.size).toBe('Audio/take 1.wav'.length);
  });

  it('finds nothing in a missing folder', async () => {
    expect((await scanFolder(path.join(dir, 'nope'), await ignoreRules(dir))).files).toEqual([]);
  });
});

describe('SafeFolder', () => {
  it('writes only inside the folder: never through a link (a folder, the file itself), never at a path leaving it', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'band-outside-'));
    try {
      await mkdir(path.join(dir, 'session'));
      await symlink(outside, path.join(dir, 'session/Linked'));
      await symlink(path.join(outside, 'target.wav'), path.join(dir, 'session/link.wav'));
      // The folder itself may be reached through a link (the user named it): it is resolved once.
      await symlink(path.join(dir, 'session'), path.join(dir, 'alias'));
      const folder = await SafeFolder.open(path.join(dir, 'alias'), { create: false });
      expect(folder.root).toBe(await realpath(path.join(dir, 'session')));

      await expect(folder.create('Linked/take.wav')).rejects.toThrow('Linked is a symbolic link (never followed)');
      await expect(folder.create('link.wav')).rejects.toMatchObject({ code: 'EEXIST' });
      for (const escape of ['../up.wav', '/abs.wav', 'a//b.wav', 'a/./b.wav', 'a\\..\\b.wav']) {
        await expect(folder.create(escape)).rejects.toThrow('not a path inside the folder');
      }
      const made = await folder.create('Audio/Takes/new.wav');
      await made.handle.writeFile('bytes');
      await made.handle.close();
      await expect(folder.move('Audio/Takes/new.wav', 'Linked/new.wav', { replace: true })).rejects.toThrow('Linked is a symbolic link');
      await expect(folder.move('Audio/Takes/new.wav', 'link.wav', { replace: true })).rejects.toThrow('link.wav is a symbolic link (never followed, never replaced)');
      await folder.writeWhole('kept.wav', 'kept');
      await expect(folder.move('Audio/Takes/new.wav', 'kept.wav', { replace: false })).rejects.toMatchObject({ code: 'EEXIST' });
      await folder.move('Audio/Takes/new.wav', 'kept.wav', { replace: true });
      expect(await readFile(path.join(dir, 'session/kept.wav'), 'utf8')).toBe('bytes');
      await folder.remove('Linked');
      expect(await readdir(outside)).toEqual([]);
      expect((await readdir(path.join(dir, 'session'))).sort()).toEqual(['Audio', 'kept.wav', 'link.wav']);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe('localState', () => {
  it('reads a file only when its size or mtime differ from the manifest, each at most once', async () => {
    await put('a.wav', 'aaa');
    await put('b.wav', 'bbb');
    await put('c.wav', 'ccc');
    const scanned = (await scanFolder(dir, await ignoreRules(dir))).files;
    const reads: string[] = [];
    const counting = (file: string) => (reads.push(path.basename(file)), sha256OfFile(file));
    const first = await localState(dir, scanned, {}, 2, () => true, counting);
    expect(first.hashed).toBe(3);
    const recorded = Object.fromEntries(first.files.map((file) => [file.path, { series: 's', version: 1, sha256: file.sha256!, size: file.size, mtimeMs: file.mtimeMs }]));
    reads.length = 0;
    await utimes(path.join(dir, 'b.wav'), new Date(), new Date(Date.now() + 5000));
    await put('c.wav', 'cccc');
    const rescanned = (await scanFolder(dir, await ignoreRules(dir))).files;
    const second = await localState(dir, rescanned, recorded, 2, () => true, counting);
    expect(reads.sort()).toEqual(['b.wav', 'c.wav']);
    expect(second.files[0]!.sha256).toBe(first.files[0]!.sha256);
    expect(second.files[1]!.sha256).toBe(first.files[1]!.sha256);
    expect(second.files[2]!.sha256).not.toBe(first.files[2]!.sha256);
  });

  it('does not read a file whose hash no rule needs (one new on both sides): it has no sha256', async () => {
    await put('known.wav', 'k');
    await put('new.wav', 'n');
    const scanned = (await scanFolder(dir, await ignoreRules(dir))).files;
    const reads: string[] = [];
    const counting = (file: string) => (reads.push(path.basename(file)), sha256OfFile(file));
    const state = await localState(dir, scanned, {}, 2, (file) => file.path === 'known.wav', counting);
    expect(reads).toEqual(['known.wav']);
    expect(state.hashed).toBe(1);
    expect(state.files.map((file) => [file.path, file.sha256 === undefined])).toEqual([['known.wav', false], ['new.wav', true]]);
  });
});

describe('manifest', () => {
  it('is written atomically (no temporary file left) and read back; another server or cut is exit 2 naming both', async () => {
    expect(await readManifest(dir)).toBeNull();
    const manifest = { server: 'http://a', cutId: 'cut-1', files: { 'z.wav': { series: 's', version: 2, sha256: 'f'.repeat(64), size: 3, mtimeMs: 1.5 } } };
    await writeManifest(await folder(), manifest);
    expect(await readdir(path.join(dir, '.band'))).toEqual(['manifest.json']);
    expect(await readManifest(dir)).toEqual(manifest);
    expect(() => checkManifestTarget(manifest, 'http://a', 'cut-1', dir)).not.toThrow();
    expect(() => checkManifestTarget(manifest, 'http://b', 'cut-2', dir)).toThrow(/cut cut-1 on http:\/\/a, not cut cut-2 on http:\/\/b/);
    try {
      checkManifestTarget(manifest, 'http://a', 'cut-2', dir);
    } catch (error) {
      expect((error as { exitCode: number }).exitCode).toBe(EXIT.usage);
    }
    await writeFile(path.join(dir, '.band/manifest.json'), '{"format":');
    await expect(readManifest(dir)).rejects.toThrow(/not a manifest band can read/);
  });
});

describe('lockFolder', () => {
  it('holds the PID and start time, refuses a second run while that process runs, and takes over a stale lock', async () => {
    const running = (alive: (pid: number) => boolean) => async (holder: LockHolder) => alive(holder.pid);
    const lock = await lockFolder(await folder(), { pid: 111, started: 'ticks 5' }, running(() => true));
    expect(await readFile(path.join(dir, '.band/lock'), 'utf8')).toBe('111 ticks 5\n');
    await expect(lockFolder(await folder(), { pid: 222 }, running(() => true))).rejects.toThrow(/PID 111/);
    const taken = await lockFolder(await folder(), { pid: 222 }, running((pid) => pid !== 111));
    expect(await readFile(path.join(dir, '.band/lock'), 'utf8')).toBe('222\n');
    await taken.release();
    await lock.release();
    expect(await readdir(path.join(dir, '.band'))).toEqual([]);
  });

  it('takes a lock it cannot read (empty, garbled, a link) as held, and names what to do', async () => {
    await mkdir(path.join(dir, '.band'));
    for (const [content, asLink] of [['', false], ['12', false], ['x y\n', false], ['', true]] as const) {
      await rm(path.join(dir, '.band/lock'), { force: true });
      if (asLink) await symlink(path.join(dir, 'elsewhere'), path.join(dir, '.band/lock'));
      else await writeFile(path.join(dir, '.band/lock'), content);
      await expect(lockFolder(await folder(), { pid: 222 }, async () => false)).rejects.toThrow(/\.band\/lock is not a lock band can read.*if no band run is working on .*, remove it/);
    }
  });

  it('takes over a lock whose PID is another process now (a running one, started at another time)', async () => {
    // The test runner's parent: a process that runs, as a PID the OS gave again would.
    const other = process.ppid;
    const started = await processStart(other);
    expect(started).toMatch(/^ticks \d+$/);
    await mkdir(path.join(dir, '.band'));
    await writeFile(path.join(dir, '.band/lock'), `${other} ${started}\n`);
    await expect(lockFolder(await folder())).rejects.toThrow(new RegExp(`PID ${other}`));

    await writeFile(path.join(dir, '.band/lock'), `${other} ticks 1\n`);
    const lock = await lockFolder(await folder());
    expect(await readFile(path.join(dir, '.band/lock'), 'utf8')).toBe(`${process.pid} ${await processStart(process.pid)}\n`);
    await lock.release();
  });
});

describe('paths', () => {
  it('keys paths by NFC and case folding', () => {
    expect(pathKey('Cafe\u0301/Take.WAV')).toBe(pathKey('café/take.wav'));
    expect(pathKey('Straße.wav')).toBe(pathKey('STRASSE.wav'));
  });

  it('names conflict copies before the last extension of the last segment, numbered when taken', () => {
    const none = () => false;
    expect(conflictCopyPath('a.b/song.als', 3, none)).toBe('a.b/song.band-conflict-v3.als');
    expect(conflictCopyPath('take.tar.gz', 1, none)).toBe('take.tar.band-conflict-v1.gz');
    expect(conflictCopyPath('Makefile', 2, none)).toBe('Makefile.band-conflict-v2');
    const taken = new Set(['song.band-conflict-v3.als', 'song.band-conflict-v3-2.als']);
    expect(conflictCopyPath('song.als', 3, (candidate) => taken.has(candidate))).toBe('song.band-conflict-v3-3.als');
  });

  it('parses --cut as an id or project/vibe/cut with \\/ for a slash in a name', () => {
    expect(parseCutPath('3f1e0c4a-6b2d-4f8e-a1c3-5d7e9f0a2b4c')).toEqual({ cut: '3f1e0c4a-6b2d-4f8e-a1c3-5d7e9f0a2b4c' });
    expect(parseCutPath('Demo/Verse/AC\\/DC take')).toEqual({ project: 'Demo', vibe: 'Verse', cut: 'AC/DC take' });
    expect(() => parseCutPath('Demo/Verse')).toThrow(/<project>\/<vibe>\/<cut>/);
  });
});
