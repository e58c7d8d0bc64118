// The README's "Reviewing a mix: a walk-through", run as written: every `band …` command of that section, read
// from the README itself and split as a shell would (shell-quote), in its order, against a real server. A
// command edited in the README is the command this test runs; one that no longer works fails here.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Comment } from '@bandcollab/sdk';
import { parse } from 'shell-quote';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { toneWav } from '../../server/test/support/files.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { type CliUser, cliUser, registerWithCli, type RunResult } from './support/cli.js';

vi.setConfig({ testTimeout: 180_000 });

const README = path.resolve(import.meta.dirname, '../../../README.md');

/** The inline `band …` commands of the walk-through, in order, each on one line. */
async function walkthroughCommands(): Promise<string[]> {
  const readme = await readFile(README, 'utf8');
  const start = readme.indexOf('### Reviewing a mix: a walk-through');
  const section = readme.slice(start, readme.indexOf('\n## ', start));
  return [...section.matchAll(/`(band [^`]+)`/g)].map((match) => match[1]!.replace(/\s+/g, ' '));
}

let server: TestServer;
let ana: CliUser;
let ben: CliUser;
let work: string;

beforeAll(async () => {
  server = await startTestServer();
  work = await mkdtemp(path.join(os.tmpdir(), 'band-walkthrough-'));
  ana = await cliUser(server.url);
  ben = await cliUser(server.url);
  await registerWithCli(ana, 'ana@example.com', 'correct horse battery', 'Ana');
  await registerWithCli(ben, 'ben@example.com', 'correct horse battery', 'Ben');
});
afterAll(async () => {
  await ana?.cleanup();
  await ben?.cleanup();
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

it('runs every band command of the README walk-through as written, and the release gate passes at the end', async () => {
  const commands = await walkthroughCommands();
  expect(commands.length).toBeGreaterThanOrEqual(8);
  // What the README leaves to the reader: the mix CI built (2:30, so --to 2:18 fits), CI's token, and the ids a step prints.
  await mkdir(path.join(work, 'build'));
  await writeFile(path.join(work, 'build', 'mix.wav'), toneWav(150));
  const ciToken = (await ana.band(['token', 'create', 'ci', '--scope', 'write', '--expires', '1d'])).stdout.trim();
  const ids: { comment?: string; link?: string; file?: string } = {};
  const run = async (user: CliUser, command: string, env: Record<string, string> = {}): Promise<RunResult> => {
    // The README's placeholders (to a shell, `<` would be a redirection) become the ids the steps before printed.
    const filled = command.replace('<link id>', ids.link ?? '').replace('<id>', ids.comment ?? '');
    const words = parse(filled, { FILE_ID: ids.file ?? '' });
    // A gate's `&& ./release.sh` is what the user runs after it: the test stops at the gate.
    const gate = words.findIndex((word) => typeof word === 'object');
    const args = (gate === -1 ? words : words.slice(0, gate)).slice(1).map((word) => {
      if (typeof word !== 'string') throw new Error(`${command}: ${JSON.stringify(word)} is not a plain word`);
      return word;
    });
    const result = await user.band(args, { cwd: work, env });
    expect(result.exitCode, `${command}\n${result.stderr}`).toBe(0);
    return result;
  };

  for (const command of commands) {
    const verb = command.split(' ').slice(1, 3).join(' ');
    if (verb.startsWith('publish')) {
      await run(ana, command, { BAND_TOKEN: ciToken, CI: 'true' });
      // The band: Ben joins the project CI made, and a feedback link exists for step 3's commands.
      const projects = JSON.parse((await ana.band(['project', 'list', '--json'])).stdout) as { id: string; name: string }[];
      const project = projects.find((p) => p.name === 'Summer EP')!;
      const invite = JSON.parse((await ana.band(['member', 'invite', 'ben@example.com', '--project', project.id, '--json'])).stdout) as { inviteUrl: string };
      expect((await ben.band(['invitation', 'accept', invite.inviteUrl])).exitCode).toBe(0);
      const files = JSON.parse((await ana.band(['file', 'list', '--cut', 'Final', '--vibe', 'Masters', '--project', 'Summer EP', '--json'])).stdout) as { id: string }[];
      ids.file = files[0]!.id;
      await ana.band(['file', 'share', ids.file, '--feedback']);
      const links = JSON.parse((await ana.band(['share', 'list', '--file', ids.file, '--json'])).stdout) as { id: string }[];
      ids.link = links[0]!.id;
    } else if (verb === 'comment add') {
      await run(command.includes('--mention') ? ana : ben, command);
    } else if (verb === 'comment list') {
      const listed = await run(ana, `${command} --json`);
      const comments = JSON.parse(listed.stdout) as Comment[];
      expect(comments.map((comment) => comment.body).sort()).toEqual(['kick too loud', 'vocals drift']);
      // The reader copies the short id the human list shows.
      ids.comment = comments.find((comment) => comment.body === 'vocals drift')!.id.slice(0, 8);
      expect((await run(ana, command)).stdout).toMatch(new RegExp(`  ${ids.comment}\n {4}vocals drift`));
    } else if (verb === 'review approve') {
      // "The band approves": both members.
      await run(ana, command);
      await run(ben, command);
    } else if (verb === 'comment resolve') {
      // "for each note dealt with".
      const open = JSON.parse((await ana.band(['comment', 'list', ids.file!, '--json'])).stdout) as Comment[];
      for (const comment of open) {
        ids.comment = comment.id.slice(0, 8);
        await run(ana, command);
      }
    } else {
      await run(ana, command);
    }
  }
  // The gate was the last command, and it passed: two approvals, no changes asked, no open comment.
  expect(commands.at(-1)).toMatch(/^band review status /);
});
