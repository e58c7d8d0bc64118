// Terminal control sequences in what the server sends (another member's description, a name a hostile or
// broken server returns, an error detail) are shown as visible text in human output, never sent to the
// terminal; --json stays the exact strings.
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { BandClient, type FileRecord, type ProjectDetail } from '@bandcollab/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { printable } from '../src/render.js';
import { BAND, type CliUser, cliUser, type RunResult, registerWithCli, wavBytes } from './support/cli.js';

vi.setConfig({ testTimeout: 90_000 });

/** Clipboard write (OSC 52), window title, line erase, carriage return, bell, C1 CSI, CRLF; and lines to keep. */
const DESCRIPTION = 'line one\n\tindented\u001b]52;c;ZXZpbA==\u0007 title\u001b]0;pwned\u0007 erase\u001b[2K cr\r bel\u0007 csi\u009b31m red\r\nlast line';
/** What a name may hold when a server does not refuse control characters (ours does). */
const NAME = 'Evil\u001b]0;pwned\u0007\u001b[2K\r\u009b2J';

/** Any control character a terminal acts on: C0 except newline and tab, DEL, C1. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** Bidirectional controls: they reorder what follows them on the screen. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

function neutral(result: RunResult): RunResult {
  expect(result.stdout).not.toMatch(CONTROL);
  expect(result.stderr).not.toMatch(CONTROL);
  expect(result.stdout).not.toMatch(BIDI);
  expect(result.stderr).not.toMatch(BIDI);
  return result;
}

let server: TestServer;
let ana: CliUser;
let project: ProjectDetail;
let file: FileRecord;

beforeAll(async () => {
  server = await startTestServer();
  ana = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com', 'correct horse battery', 'Ana');
  const sdk = new BandClient({ baseUrl: server.url });
  await sdk.auth.login({ email: 'ana@example.com', password: 'correct horse battery' });
  const created = await sdk.projects.create({ name: 'Hostile' });
  const vibe = await sdk.vibes.create(created.id, { name: 'Verse' });
  const cut = await sdk.cuts.create(vibe.id, { name: 'Take' });
  const wav = path.join(ana.home, 'take.wav');
  await writeFile(wav, wavBytes(1));
  await sdk.files.upload({ cutId: cut.id, file: wav });
  // The server refuses control characters in names and descriptions; a hostile server would not.
  for (const table of ['projects', 'vibes', 'cuts', 'files']) await server.sql.unsafe(`update ${table} set name = $1`, [NAME]);
  await server.sql`update projects set description = ${DESCRIPTION}`;
  await server.sql`update users set name = ${NAME}`;
  project = await sdk.projects.get(created.id);
  file = project.vibes[0]!.cuts[0]!.files[0]!;
});
afterAll(async () => {
  await ana?.cleanup();
  await server?.close();
});

describe('printable', () => {
  it('shows every C0 (but newline and tab), DEL and C1 character as \\xHH, and leaves the rest', () => {
    for (let code = 0; code <= 0x9f; code += 1) {
      const char = String.fromCharCode(code);
      const expected = char === '\n' || char === '\t' || (code >= 0x20 && code < 0x7f) ? char : `\\x${code.toString(16).padStart(2, '0')}`;
      expect(printable(char)).toBe(expected);
    }
    expect(printable('a\r\nb')).toBe('a\nb');
    expect(printable('take\u202Evaw.exe \u2066x\u2069 \u200E\u200F\u061C\u202A')).toBe('take\\u202evaw.exe \\u2066x\\u2069 \\u200e\\u200f\\u061c\\u202a');
    expect(printable('été ♪ 日本')).toBe('été ♪ 日本');
  });
});

describe('human output neutralises control characters from the server', () => {
  it('project show keeps the description lines and shows the escapes as text', async () => {
    const shown = neutral(await ana.band(['project', 'show', project.id]));
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toContain('line one\n\tindented\\x1b]52;c;ZXZpbA==\\x07 title\\x1b]0;pwned\\x07 erase\\x1b[2K cr\\x0d bel\\x07 csi\\x9b31m red\nlast line');
    expect(shown.stdout).toContain('Evil\\x1b]0;pwned\\x07\\x1b[2K\\x0d\\x9b2J <ana@example.com>');
  });

  it('tables, records, messages and errors: project list, file list, file info, auth status, a refused delete', async () => {
    const cutId = project.vibes[0]!.cuts[0]!.id;
    for (const args of [['project', 'list'], ['file', 'list', '--cut', cutId], ['file', 'info', file.id], ['auth', 'status']]) {
      const result = neutral(await ana.band(args));
      expect(result.exitCode, args.join(' ')).toBe(0);
      expect(result.stdout, args.join(' ')).toContain('Evil\\x1b]0;pwned');
    }
    const refused = neutral(await ana.band(['vibe', 'delete', project.vibes[0]!.id]));
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('Delete vibe Evil\\x1b]0;pwned');
  });

  it('an error detail from the server', async () => {
    const detail = `no such project\u001b]52;c;ZXZpbA==\u0007\u009b2J`;
    const hostile = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, detail, code: 'NOT_FOUND', requestId: 'r\u001b[2J' }));
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
      const result = neutral(await ana.band(['project', 'show', project.id], { env: { BAND_API_URL: url, BAND_TOKEN: 'token' } }));
      expect(result.exitCode).toBe(6);
      expect(result.stderr).toBe('error: no such project\\x1b]52;c;ZXZpbA==\\x07\\x9b2J (request id r\\x1b[2J)\n');
    } finally {
      hostile.close();
    }
  });

  it('bidirectional controls another member wrote are shown as text, so a name cannot pose as another', async () => {
    await server.sql`update projects set description = ${'mix_\u202Ewav.exe and \u2067hidden\u2069'} where id = ${project.id}`;
    try {
      const shown = neutral(await ana.band(['project', 'show', project.id]));
      expect(shown.stdout).toContain('mix_\\u202ewav.exe and \\u2067hidden\\u2069');
      const asJson = await ana.band(['project', 'show', project.id, '--json']);
      expect(asJson.stdout).not.toMatch(BIDI);
      expect((JSON.parse(asJson.stdout) as ProjectDetail).description).toBe('mix_\u202Ewav.exe and \u2067hidden\u2069');
    } finally {
      await server.sql`update projects set description = ${DESCRIPTION} where id = ${project.id}`;
    }
  });

  it('band watch: event data', async () => {
    const child: ChildProcess = spawn(process.execPath, [BAND, 'watch'], { env: ana.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const until = async (check: () => boolean) => {
      while (!check()) await new Promise((resolve) => setTimeout(resolve, 25));
    };
    try {
      await until(() => /watching 1 project/.test(stderr));
      const sdk = new BandClient({ baseUrl: server.url });
      await sdk.auth.login({ email: 'ana@example.com', password: 'correct horse battery' });
      await sdk.projects.update(project.id, { description: 'plain text' });
      // The upload's analysis and preview may announce themselves first on a loaded machine.
      await until(() => /project\.updated.*\n/.test(stdout));
    } finally {
      child.kill('SIGINT');
      await server.sql`update projects set description = ${DESCRIPTION}`;
    }
    expect(stdout).toContain('project.updated  Evil\\x1b]0;pwned\\x07\\x1b[2K\\x0d\\x9b2J updated the project (now "Evil\\x1b]0;pwned');
    neutral({ exitCode: 0, stdout, stderr });
  });
});

describe('--json keeps the exact strings', () => {
  it('project show --json round-trips the description and names, escaping every control character', async () => {
    const shown = await ana.band(['project', 'show', project.id, '--json']);
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).not.toMatch(CONTROL);
    const parsed = JSON.parse(shown.stdout) as ProjectDetail;
    expect(parsed.id).toBe(project.id);
    expect(parsed.description).toBe(DESCRIPTION);
    expect(parsed.name).toBe(NAME);
    expect(parsed.members[0]!.name).toBe(NAME);
  });
});
