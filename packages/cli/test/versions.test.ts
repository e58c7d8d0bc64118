import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CutWithFiles, FileRecord } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { apiGet, type CliUser, cliUser, registerWithCli, wavBytes } from './support/cli.js';

vi.setConfig({ testTimeout: 90_000 });

let server: TestServer;
let ana: CliUser;
let token: string;
let work: string;

beforeAll(async () => {
  server = await startTestServer();
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com');
  token = (await ana.band(['auth', 'token'])).stdout.trim();
  work = await mkdtemp(path.join(os.tmpdir(), 'band-versions-'));
  await ana.band(['project', 'create', 'Album']);
  await ana.band(['vibe', 'create', 'Single', '--project', 'Album']);
});
afterAll(async () => {
  await ana?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
  await server?.close();
});

const where = (cut: string) => ['--cut', cut, '--vibe', 'Single', '--project', 'Album'];
const filesOf = async (cutId: string) => (await apiGet<CutWithFiles>(server.url, `/api/cuts/${cutId}`, token)).files;

describe('versions from the command line', () => {
  it('uploads the next version with --version-of, and nothing with --if-changed when the mix is the same', async () => {
    const cut = JSON.parse((await ana.band(['cut', 'create', 'Mix A', '--vibe', 'Single', '--project', 'Album', '--json'])).stdout) as CutWithFiles;
    const mix = path.join(work, 'mix.wav');
    await writeFile(mix, wavBytes(1, 20_000));
    expect((await ana.band(['file', 'upload', mix, ...where('Mix A')])).exitCode).toBe(0);

    await writeFile(mix, wavBytes(2, 20_000));
    const second = await ana.band(['file', 'upload', mix, ...where('Mix A'), '--version-of', 'mix.wav', '--if-changed', '--json']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect((JSON.parse(second.stdout) as FileRecord[])[0]!.series).toMatchObject({ version: 2, latest: true, count: 2 });

    const again = await ana.band(['file', 'upload', mix, ...where('Mix A'), '--version-of', 'mix.wav', '--if-changed']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toContain('mix.wav is unchanged (the latest version has the same content): not uploaded');
    expect((await filesOf(cut.id)).map((file) => file.series.version)).toEqual([1, 2]);
    // Two rows named mix.wav: the version column tells them apart; a review names the version it was made on.
    const listed = await ana.band(['file', 'list', ...where('Mix A')]);
    expect(listed.stdout).toMatch(/^mix\.wav +v1 /m);
    expect(listed.stdout).toMatch(/^mix\.wav +v2 /m);
    expect((await ana.band(['review', 'approve', 'mix', ...where('Mix A')])).stdout).toBe('Approved mix.wav v2\n');

    expect((await ana.band(['file', 'upload', mix, ...where('Mix A'), '--if-changed'])).exitCode).toBe(2);
  });

  it('publishes a changed mix of the same name as its next version, and an unchanged one not at all', async () => {
    const mix = path.join(work, 'master.wav');
    const publish = () => ana.band(['publish', mix, '--project', 'Album', '--vibe', 'Single', '--cut', 'Master', '--create']);
    await writeFile(mix, wavBytes(3, 20_000));
    expect((await publish()).exitCode).toBe(0);
    const rerun = await publish();
    expect(rerun.exitCode).toBe(0);
    expect(rerun.stderr).toContain('master.wav is unchanged: already on cut Master');
    await writeFile(mix, wavBytes(4, 20_000));
    expect((await publish()).exitCode).toBe(0);

    const versions = await ana.band(['file', 'versions', 'master.wav', ...where('Master')]);
    expect(versions.exitCode, versions.stderr).toBe(0);
    expect(versions.stdout).toMatch(/VERSION\s+UPLOADED BY/);
    expect(versions.stdout).toMatch(/v1\s/);
    expect(versions.stdout).toMatch(/v2 \(latest\)/);
    const listed = JSON.parse((await ana.band(['file', 'versions', 'master.wav', ...where('Master'), '--json'])).stdout) as FileRecord[];
    expect(listed.map((file) => [file.series.version, file.series.latest])).toEqual([
      [1, false],
      [2, true],
    ]);
  });
});
