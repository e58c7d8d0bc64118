import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { requirePrerequisite } from './support/prerequisites.js';
import { REPO_ROOT } from './support/repo-copy.js';

// The files docs/deployment.md hands an admin. No docker daemon runs in CI (nor on the machines the suite runs
// on), so the Dockerfile is checked as written: what it copies exists and is not left out of the build
// context, its stages are the ones it names, and its last stage runs the built server as docs/deployment.md says.
// The systemd unit goes through `systemd-analyze verify`, which .ci/run installs.
const run = promisify(execFile);

interface Stage {
  name: string | null;
  instructions: { keyword: string; args: string }[];
}

async function dockerfileStages(): Promise<Stage[]> {
  const text = (await readFile(path.join(REPO_ROOT, 'Dockerfile'), 'utf8')).replace(/\\\n\s*/g, ' ');
  const stages: Stage[] = [];
  for (const line of text.split('\n')) {
    const match = /^([A-Z]+)\s+(.*)$/.exec(line.trim());
    if (!match) continue;
    const [, keyword, args] = match;
    if (keyword === 'FROM') stages.push({ name: /\bAS\s+(\S+)$/i.exec(args!)?.[1] ?? null, instructions: [] });
    stages.at(-1)?.instructions.push({ keyword: keyword!, args: args! });
  }
  return stages;
}

/** Whether `.dockerignore` leaves `relative` out of the build context (its patterns as this repository writes them). */
async function ignoredByDocker(relative: string): Promise<boolean> {
  const patterns = (await readFile(path.join(REPO_ROOT, '.dockerignore'), 'utf8'))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const segments = relative.split('/');
  return patterns.some((pattern) => {
    if (pattern.startsWith('**/')) {
      const name = new RegExp(`^${pattern.slice(3).replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`);
      return segments.some((segment) => name.test(segment));
    }
    return relative === pattern || relative.startsWith(`${pattern}/`);
  });
}

describe('the Dockerfile', () => {
  it('copies only what exists in the build context, from stages it declares before', async () => {
    const stages = await dockerfileStages();
    expect(stages.length).toBeGreaterThan(1);
    const declared: string[] = [];
    for (const stage of stages) {
      for (const { keyword, args } of stage.instructions.filter((i) => i.keyword === 'COPY')) {
        const from = /--from=(\S+)/.exec(args)?.[1];
        const paths = args.split(/\s+/).filter((word) => !word.startsWith('--'));
        if (from) {
          expect(declared, `${keyword} ${args}`).toContain(from);
          continue;
        }
        for (const source of paths.slice(0, -1)) {
          expect(existsSync(path.join(REPO_ROOT, source)), `COPY source ${source}`).toBe(true);
          expect(await ignoredByDocker(source), `COPY source ${source} is left out by .dockerignore`).toBe(false);
        }
      }
      if (stage.name) declared.push(stage.name);
    }
    // The live server's files and database, and what is installed or built here, never go into the context.
    for (const local of ['data', 'node_modules', 'packages/server/node_modules', 'packages/server/dist', '.git']) {
      expect(await ignoredByDocker(local), local).toBe(true);
    }
  });

  it("installs the pnpm this repository pins and a Node its engines accept", async () => {
    const text = await readFile(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
    const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { packageManager: string };
    expect(text).toContain(`npm install -g ${manifest.packageManager.split('+')[0]} `);
    const major = Number(/^ARG NODE_IMAGE=node:(\d+)-/m.exec(text)?.[1]);
    expect(major).toBeGreaterThanOrEqual(24); // engines: >= 22.19; an image tagged 22 may be an older 22.x
  });

  it('runs the built server as an unprivileged user, with DATA_DIR on a volume and a health check', async () => {
    const final = (await dockerfileStages()).at(-1)!;
    const args = (keyword: string) => final.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
    const env = Object.fromEntries(args('ENV').flatMap((line) => line.split(/\s+/).map((pair) => pair.split('='))));
    expect(env).toMatchObject({ HOST: '0.0.0.0', DATA_DIR: '/data' });
    expect(args('VOLUME')).toEqual([env.DATA_DIR]);
    expect(args('EXPOSE')).toEqual([env.PORT]);
    expect(args('USER')).toHaveLength(1);
    expect(args('USER')[0]).not.toMatch(/^(root|0)(:|$)/);
    expect(args('HEALTHCHECK')[0]).toContain('/api/health');

    // CMD runs the file `pnpm build` makes of the server's entry, the same one its package names as its bin.
    const command = JSON.parse(args('CMD')[0]!) as string[];
    const server = JSON.parse(await readFile(path.join(REPO_ROOT, 'packages/server/package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(command).toEqual(['node', 'packages/server/dist/main.js']);
    expect(path.join('packages/server', server.bin['bandcollab-server']!)).toBe(command[1]);

    // The last stage brings the build of the server and of each workspace package it loads at run time.
    const copied = args('COPY').join('\n');
    expect(copied).toContain('packages/server/dist');
    expect(copied).toContain('packages/server/migrations');
    const { dependencies } = JSON.parse(await readFile(path.join(REPO_ROOT, 'packages/server/package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    for (const [name, version] of Object.entries(dependencies).filter(([, version]) => version.startsWith('workspace:'))) {
      expect(copied, `${name} (${version})`).toContain(`packages/${name.split('/')[1]}/dist`);
    }
  });
});

const systemdAnalyze = await run('systemd-analyze', ['--version']).then(
  () => null,
  (error: Error) => `systemd-analyze cannot run (${error.message.split('\n')[0]}); apt-get install systemd`,
);
requirePrerequisite('systemd-analyze', systemdAnalyze);

describe.skipIf(systemdAnalyze !== null)('deploy/bandcollab.service', () => {
  let dir: string;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** `systemd-analyze verify` of `unit`, with ExecStart's Node replaced by this one (machines keep Node elsewhere). */
  async function verify(unit: string): Promise<{ exitCode: number; stderr: string }> {
    dir ??= await mkdtemp(path.join(tmpdir(), 'bandcollab-unit-'));
    const file = path.join(dir, 'bandcollab.service');
    await writeFile(file, unit.replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `));
    return run('systemd-analyze', ['verify', file]).then(
      ({ stderr }) => ({ exitCode: 0, stderr }),
      (error: { code: number; stderr: string }) => ({ exitCode: error.code, stderr: error.stderr }),
    );
  }

  it('passes systemd-analyze verify without a warning', async () => {
    const unit = await readFile(path.join(REPO_ROOT, 'deploy/bandcollab.service'), 'utf8');
    expect(await verify(unit)).toEqual({ exitCode: 0, stderr: '' });
    // verify reports a misspelt setting on stderr only, exiting 0: the empty stderr above is what counts.
    const misspelt = await verify(unit.replace('KillMode=', 'KilMode='));
    expect(misspelt.stderr).toContain("Unknown key 'KilMode'");
  });

  it('is sandboxed: systemd-analyze security rates it OK (below 2.0; a bare unit is 8.5 EXPOSED)', async () => {
    dir ??= await mkdtemp(path.join(tmpdir(), 'bandcollab-unit-'));
    const file = path.join(dir, 'bandcollab.service');
    const unit = await readFile(path.join(REPO_ROOT, 'deploy/bandcollab.service'), 'utf8');
    await writeFile(file, unit.replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `));
    const { stdout } = await run('systemd-analyze', ['security', '--offline=true', file]);
    const exposure = Number(/Overall exposure level for bandcollab\.service: (\d+\.\d+)/.exec(stdout)?.[1]);
    expect(exposure, stdout).toBeLessThan(2);
  });

  it('runs the built server on the DATA_DIR systemd makes for it', async () => {
    const unit = await readFile(path.join(REPO_ROOT, 'deploy/bandcollab.service'), 'utf8');
    const setting = (key: string) => new RegExp(`^${key}=(.*)$`, 'm').exec(unit)?.[1];
    expect(setting('ExecStart')).toBe(`/usr/bin/node ${setting('WorkingDirectory')}/packages/server/dist/main.js`);
    expect(setting('Environment')).toBe(`DATA_DIR=/var/lib/${setting('StateDirectory')}`);
    expect(setting('User')).not.toBe('root');
    // Longer than the server's grace for uploads (SHUTDOWN_GRACE_SECONDS, 30 s), and SIGTERM to the server alone.
    expect(Number(setting('TimeoutStopSec'))).toBeGreaterThan(30);
    expect(setting('KillMode')).toBe('mixed');
  });
});
