import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/exit-codes.js';
import type { LocalFile } from '../../src/session/changes.js';
import type { Manifest } from '../../src/session/manifest.js';
import { defaultMaxDelete, planPull, planPush, type RemoteFile } from '../../src/session/plan.js';
import { actionSummary } from '../../src/session/report.js';

const sha = (c: string) => c.repeat(64);
const local = (path: string, hash: string, mtimeMs = 1): LocalFile => ({ path, size: 10, mtimeMs, sha256: sha(hash) });
const remote = (path: string, hash: string, version = 1, series = `s-${path}`): RemoteFile => ({ path, fileId: `f-${path}-${version}`, series, version, sha256: sha(hash), size: 10 });
const manifestOf = (...files: RemoteFile[]): Manifest => ({
  server: 'http://x',
  cutId: 'c',
  files: Object.fromEntries(files.map((file) => [file.path, { series: file.series, version: file.version, sha256: file.sha256, size: 10, mtimeMs: 1 }])),
});
const options = { force: false, delete: false };
const summary = (actions: Parameters<typeof actionSummary>[0][]) => actions.map((a) => `${a.action} ${a.path}`);

describe('planPush', () => {
  it('uploads new and changed files, skips unchanged ones, and never overwrites a file changed on both sides', () => {
    const last = manifestOf(remote('a.wav', 'a'), remote('b.wav', 'b'), remote('song.als', 's'), remote('c.wav', 'c'));
    const actions = planPush(
      [local('a.wav', 'a'), local('b.wav', 'B'), local('song.als', 'S'), local('c.wav', 'c'), local('new/d.wav', 'd')],
      last,
      [remote('a.wav', 'a'), remote('b.wav', 'b'), remote('song.als', 'x', 2), remote('c.wav', 'y', 2)],
      options,
    );
    expect(summary(actions)).toEqual(['skip a.wav', 'upload b.wav', 'skip c.wav', 'upload new/d.wav', 'conflict song.als']);
    const changed = actions.find((a) => a.path === 'b.wav')!;
    expect(changed).toMatchObject({ ifChanged: true, versionOf: { fileId: 'f-b.wav-1' } });
    expect(actions.find((a) => a.path === 'song.als')).toMatchObject({ attention: true });
    expect(actions.find((a) => a.path === 'c.wav')!.reason).toMatch(/changed on the cut/);
    const forced = planPush([local('song.als', 'S')], last, [remote('song.als', 'x', 2)], { ...options, force: true });
    expect(forced[0]).toMatchObject({ action: 'upload', ifChanged: false, versionOf: { version: 2 } });
  });

  it('deletes only with --delete, keeps what changed on the cut, and stops above --max-delete', () => {
    const files = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((n) => remote(`${n}.wav`, n));
    const last = manifestOf(...files);
    const kept = files.slice(2).map((file) => local(file.path, file.sha256[0]!));
    expect(summary(planPush(kept, last, files, options)).slice(0, 2)).toEqual(['skip a.wav', 'skip b.wav']);
    expect(summary(planPush(kept, last, files, { ...options, delete: true })).slice(0, 2)).toEqual(['delete a.wav', 'delete b.wav']);
    expect(defaultMaxDelete(8)).toBe(2);
    expect(defaultMaxDelete(3)).toBe(1);
    expect(() => planPush(kept.slice(1), last, files, { ...options, delete: true })).toThrow(/would delete 3 files, more than --max-delete 2/);
    expect(summary(planPush(kept.slice(1), last, files, { ...options, delete: true, maxDelete: 3 })).filter((a) => a.startsWith('delete'))).toHaveLength(3);
    const changedThere = planPush(kept, last, [remote('a.wav', 'z', 2), ...files.slice(1)], { ...options, delete: true });
    expect(changedThere.find((a) => a.path === 'a.wav')).toMatchObject({ action: 'conflict', attention: true });
  });

  it('refuses an empty or missing folder (exit 1) instead of deleting everything', () => {
    const error = (() => {
      try {
        planPush([], manifestOf(remote('a.wav', 'a')), [remote('a.wav', 'a')], { ...options, delete: true });
      } catch (caught) {
        return caught as { exitCode: number; message: string };
      }
    })();
    expect(error?.exitCode).toBe(EXIT.error);
    expect(error?.message).toMatch(/nothing deleted/);
  });

  it('moves a renamed file\'s series, reports a case-only rename (--force moves it), and reports case and normalisation twins', () => {
    const last = manifestOf(remote('old/take.wav', 't'), remote('Vox_01.wav', 'v'), remote('Drums.wav', 'd'));
    const here = [local('new/take.wav', 't'), local('vox_01.wav', 'v'), local('drums.wav', 'D')];
    const cut = [remote('old/take.wav', 't'), remote('Vox_01.wav', 'v'), remote('Drums.wav', 'd')];
    const actions = planPush(here, last, cut, { ...options, delete: true });
    expect(actions.map(actionSummary)).toEqual([
      { path: 'drums.wav', action: 'skip', reason: 'differs only in case from Drums.wav on the cut: not pushed (rename it back, as pull does, or --force renames it on the cut)' },
      { path: 'new/take.wav', action: 'upload', reason: 'renamed from old/take.wav' },
      { path: 'vox_01.wav', action: 'skip', reason: 'differs only in case from Vox_01.wav on the cut: not pushed (rename it back, as pull does, or --force renames it on the cut)' },
    ]);
    expect(actions.filter((action) => action.attention).map((action) => action.path)).toEqual(['drums.wav', 'vox_01.wav']);
    const forced = planPush(here, last, cut, { ...options, force: true });
    expect(forced.map(actionSummary)).toEqual([
      { path: 'drums.wav', action: 'upload', reason: 'changed' },
      { path: 'new/take.wav', action: 'upload', reason: 'renamed from old/take.wav' },
      { path: 'vox_01.wav', action: 'upload', reason: 'renamed from Vox_01.wav' },
    ]);
    const nfd = 'Cafe\u0301.wav';
    const twins = planPush([local(nfd, 'x'), local('café.wav', 'y'), local('A.wav', 'a'), local('a.wav', 'b'), local('ok.wav', 'o')], null, [], options);
    expect(twins.filter((a) => a.attention).map((a) => a.path).sort()).toEqual(['A.wav', 'a.wav', 'café.wav', nfd].sort());
    expect(summary(twins).filter((a) => a.startsWith('upload'))).toEqual(['upload ok.wav']);
    // An NFD name is the server's NFC path: unchanged, not renamed.
    const nfc = nfd.normalize('NFC');
    expect(planPush([local(nfd, 'x')], manifestOf(remote(nfc, 'x')), [remote(nfc, 'x')], options)[0]).toMatchObject({ action: 'skip', reason: 'unchanged' });
  });
});

describe('planPull', () => {
  it('downloads what changed on the cut, restores what was deleted here, and writes a conflict copy beside a file changed on both sides', () => {
    const last = manifestOf(remote('a.wav', 'a'), remote('b.wav', 'b'), remote('song.als', 's'), remote('gone.wav', 'g'));
    const actions = planPull(
      [local('a.wav', 'a'), local('b.wav', 'b'), local('song.als', 'S'), local('song.band-conflict-v2.als', 'q')],
      last,
      [remote('a.wav', 'a'), remote('b.wav', 'B', 2), remote('song.als', 'x', 2), remote('gone.wav', 'g'), remote('fresh.wav', 'f')],
      options,
    );
    expect(actions.map(actionSummary)).toEqual([
      { path: 'a.wav', action: 'skip', reason: 'unchanged' },
      { path: 'b.wav', action: 'download', reason: 'changed on the cut (v2)' },
      { path: 'fresh.wav', action: 'download', reason: 'new' },
      { path: 'gone.wav', action: 'download', reason: 'deleted here, unchanged on the cut: restored' },
      { path: 'song.als', action: 'conflict', reason: 'changed here and on the cut: v2 written beside it as song.band-conflict-v2-2.als' },
      { path: 'song.band-conflict-v2.als', action: 'skip', reason: 'only here (push uploads it)' },
    ]);
    // A conflict copy left from before is ignored by the scan, but still there: the next one takes another name.
    const again = planPull([local('song.als', 'S')], last, [remote('song.als', 'x', 2)], options, ['song.band-conflict-v2.als']);
    expect(again[0]).toMatchObject({ action: 'conflict', copyPath: 'song.band-conflict-v2-2.als' });
    const forced = planPull([local('song.als', 'S')], last, [remote('song.als', 'x', 2)], { ...options, force: true });
    expect(forced[0]).toMatchObject({ action: 'download', trashFirst: true });
  });

  it('moves files deleted on the cut to the trash only with --delete, keeps local changes, and refuses an empty cut', () => {
    const last = manifestOf(remote('a.wav', 'a'), remote('b.wav', 'b'), remote('c.wav', 'c'), remote('d.wav', 'd'));
    const here = [local('a.wav', 'a'), local('b.wav', 'X'), local('c.wav', 'c'), local('d.wav', 'd')];
    const kept = planPull(here, last, [remote('c.wav', 'c'), remote('d.wav', 'd')], options);
    expect(summary(kept)).toEqual(['skip a.wav', 'skip b.wav', 'skip c.wav', 'skip d.wav']);
    expect(kept.filter((action) => action.deletionKept).map((action) => action.path)).toEqual(['a.wav', 'b.wav']);
    const withDelete = planPull(here, last, [remote('c.wav', 'c'), remote('d.wav', 'd')], { ...options, delete: true });
    expect(summary(withDelete)).toEqual(['delete a.wav', 'skip b.wav', 'skip c.wav', 'skip d.wav']);
    expect(withDelete[1]).toMatchObject({ attention: true });
    expect(() => planPull(here, last, [], { ...options, delete: true })).toThrow(/cut holds no files/);
  });

  it('never plans a path the contract refuses: what a server lists at one is a skip needing attention, what the folder holds there is left alone', () => {
    const listed = [remote('ok.wav', 'o'), remote('../up.wav', 'u'), remote('.git/config', 'g'), remote('/abs.wav', 'a'), remote('Cafe\u0301.wav', 'c')];
    const actions = planPull([local('.git/HEAD', 'h')], null, listed, options);
    expect(actions.map(actionSummary)).toEqual([
      { path: '../up.wav', action: 'skip', reason: 'not pulled: a path must not have an empty, . or .. segment' },
      { path: '.git/config', action: 'skip', reason: 'not pulled: a path must not have a .git, .hg, .svn or .band segment (version control and band keep their state there)' },
      { path: '/abs.wav', action: 'skip', reason: 'not pulled: a path must be relative (no leading /)' },
      { path: 'Café.wav', action: 'download', reason: 'new' },
      { path: 'ok.wav', action: 'download', reason: 'new' },
    ]);
    expect(actions.filter((action) => action.attention)).toHaveLength(3);
    const pushed = planPush([local('.git/config', 'g'), local('NUL.wav', 'n'), local('ok.wav', 'o')], null, [], options);
    expect(summary(pushed)).toEqual(['skip .git/config', 'skip NUL.wav', 'upload ok.wav']);
  });

  it('renames a file renamed on the cut instead of downloading it again', () => {
    const last = manifestOf(remote('old.wav', 'o', 1, 's1'));
    const actions = planPull([local('old.wav', 'o')], last, [remote('new/name.wav', 'o', 1, 's1')], { ...options, delete: true });
    expect(actions).toMatchObject([{ action: 'download', path: 'new/name.wav', moveFrom: 'old.wav' }]);
  });
});
