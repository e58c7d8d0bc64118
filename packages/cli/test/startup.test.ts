import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPLETION_SHELLS, completionScript } from '../src/completion-scripts.js';
import { liveTree } from '../src/completion-tree.js';
import { BAND, runBand, runInProcess } from './support/cli.js';

const RECORD_MODULES = fileURLToPath(new URL('./fixtures/record-modules.mjs', import.meta.url));

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'band-startup-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Runs band: the modules it loaded (URLs and Node's own), and the code of its files. */
async function loadedBy(args: string[], env: Record<string, string> = {}): Promise<{ loaded: string[]; code: string }> {
  const log = path.join(work, `${args.join('-')}.log`);
  await rm(log, { force: true });
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', RECORD_MODULES, BAND, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, MODULE_LOG: log, ...env },
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', () => resolve());
  });
  const loaded = (await readFile(log, 'utf8')).split('\n');
  const files = loaded.filter((url) => url.startsWith('file:'));
  return { loaded, code: (await Promise.all(files.map((url) => readFile(fileURLToPath(url), 'utf8')))).join('\n') };
}

/**
 * The source files bundled into what band loaded for `args`: the bundle keeps each one's path as a comment. The
 * build's stand-ins for Node's modules (tsup.config.ts: `lazy-node-builtin:crypto`, `global-process:process`) are
 * Node's, not band's.
 */
async function sourcesLoaded(args: string[]): Promise<string[]> {
  const { code } = await loadedBy(args);
  const sources = [...code.matchAll(/^\/\/ (\S+)$/gm)].map((match) => match[1]!);
  return [...new Set(sources.filter((source) => !/^(lazy-node-builtin|global-process):/.test(source)))];
}

/** Runs band and answers which of the big libraries the files it loaded contain. */
async function librariesLoaded(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ sdk: boolean; undici: boolean; nodeUndici: boolean; conf: boolean; formData: boolean }> {
  const { loaded, code } = await loadedBy(args, env);
  return {
    sdk: /^\/\/ \.\.\/sdk\/dist\/index\.js$/m.test(code),
    undici: /node_modules\/undici\/lib\//.test(code),
    // Node's fetch (and an ES module's `import` of node:http, whose namespace reads its WebSocket export).
    nodeUndici: loaded.includes('node:internal/deps/undici/undici'),
    conf: /node_modules\/conf\/dist\//.test(code),
    formData: /node_modules\/form-data\/lib\//.test(code),
  };
}

describe('start-up', () => {
  it.each([['auth', 'login'], ['project', 'list'], ['member', 'list'], ['vibe', 'create'], ['cut', 'create'], ['file', 'upload'], ['comment', 'add'], ['review', 'status'], ['storage'], ['publish'], ['watch'], ['completion']])(
    '`band %s … --help` loads neither the SDK, undici, conf nor form-data: a command loads them when it runs',
    async (...command: string[]) => {
      expect(await librariesLoaded([...command, '--help'])).toEqual({ sdk: false, undici: false, nodeUndici: false, conf: false, formData: false });
    },
  );

  it('a command that runs loads the SDK (so the check above can see it), conf only to save settings, undici and form-data only to upload, and never Node\'s fetch for a small request', async () => {
    // Port 9 is refused at once: the request fails fast, after the sender is loaded.
    const env = { BAND_TOKEN: 'unused', BAND_API_URL: 'http://127.0.0.1:9' };
    expect(await librariesLoaded(['project', 'list'], env)).toEqual({ sdk: true, undici: false, nodeUndici: false, conf: false, formData: false });
    expect(await librariesLoaded(['auth', 'logout'], env)).toEqual({ sdk: true, undici: false, nodeUndici: false, conf: true, formData: false });
  });
});

describe('what `band project list` loads of Node', () => {
  // Each is loaded by the code that uses it (tsup.config.ts): new credentials and uploads (crypto), prompts
  // (readline), the keychain process, $EDITOR and a browser (child_process). A list with a token uses none.
  // (worker_threads cannot be checked here: the recorder's loader hooks run on a worker thread.)
  const LATER = ['node:crypto', 'node:readline', 'node:readline/promises', 'node:child_process'];

  it('loads neither crypto, readline nor child_process', async () => {
    const env = { BAND_TOKEN: 'unused', BAND_API_URL: 'http://127.0.0.1:9' };
    const { loaded } = await loadedBy(['project', 'list'], env);
    expect(loaded).toContain('node:http');
    expect(loaded.filter((module) => LATER.includes(module))).toEqual([]);
  });
});

describe('the fast path', () => {
  // What band.cts answers from the files the build wrote, before commander, any command group, the SDK or band's
  // I/O loads: a module loaded here is a start-up regression, caught without timing anything (the ratios to
  // `node -e 0` are in `pnpm bench`).

  it.each([[['--version']], [['-V']], [['--help']], [['-h']], [['help']], [['completion', 'bash']], [['completion', 'zsh']], [['completion', 'fish']]])(
    '`band %s` loads band.cts only: its answer is a file the build wrote',
    async (args) => {
      const { loaded } = await loadedBy(args);
      expect(loaded.filter((url) => url.startsWith('file:')).map((url) => path.basename(fileURLToPath(url)))).toEqual(['band.cjs']);
    },
  );

  it('answers as a whole run does: the same root help and version, and completion from the tree of every group as it is now', async () => {
    for (const args of [['--help'], ['help'], ['--version'], ['completion', 'fish']]) {
      const [fast, whole] = await Promise.all([runBand(args), runInProcess(args)]);
      expect({ exitCode: fast.exitCode, stdout: fast.stdout, stderr: fast.stderr }, args.join(' ')).toEqual({ exitCode: whole.exitCode, stdout: whole.stdout, stderr: whole.stderr });
    }
    // The scripts the build wrote are the ones of the tree the groups declare now.
    const tree = await liveTree();
    for (const shell of COMPLETION_SHELLS) {
      expect((await runBand(['completion', shell])).stdout, shell).toBe(completionScript(shell, tree));
    }
  });

  it('`band project list --help` goes the whole way (the check above can see a group load)', async () => {
    expect(await sourcesLoaded(['project', 'list', '--help'])).toContain('src/commands/project.ts');
  });
});

describe('compile cache', () => {
  // `project list --help`: it loads several modules (commander, program.ts, the group), where `--version` loads band.cts alone.
  const startBand = (env: Record<string, string>, args = ['project', 'list', '--help']) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [BAND, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('keeps V8 code of band\'s modules under $XDG_CACHE_HOME/band, so the next start does not compile them again', async () => {
    const cache = path.join(work, 'xdg-cache');
    expect(await startBand({ XDG_CACHE_HOME: cache })).toMatchObject({ code: 0, stderr: '' });
    const entries = await readdir(path.join(cache, 'band', 'compile'), { recursive: true });
    expect(entries.length).toBeGreaterThan(1);
  });

  it('runs as before when the cache directory cannot be made', async () => {
    const file = path.join(work, 'not-a-directory');
    await writeFile(file, '');
    expect(await startBand({ XDG_CACHE_HOME: file }, ['--version'])).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
  });
});
