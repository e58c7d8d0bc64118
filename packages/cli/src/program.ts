// The root of band's command line: the groups, the global flags and the root help. The build writes the root
// help from here (answers.ts), which band.cts prints without loading commander; main.ts builds every run's program
// from the same pieces.
import { Command } from 'commander';
import packageJson from '../package.json' with { type: 'json' };
import type { Factory } from './factory.js';

interface CommandGroup {
  /** The group's description, in `band --help` and its own help (storage, publish and watch give a longer one there). */
  summary: string;
  /** Adds the group's subcommands (or its own arguments and action) to its command. */
  load: () => Promise<{ register(command: Command, factory: Factory): void }>;
}

export const GROUPS: Record<string, CommandGroup> = {
  auth: { summary: 'register, log in and out, show who you are, manage your account', load: () => import('./commands/auth/index.js') },
  project: { summary: 'list, create, show, update and delete projects', load: () => import('./commands/project.js') },
  member: { summary: 'invite members, change their role, remove them', load: () => import('./commands/member.js') },
  invitation: { summary: 'accept an invitation link, or see what it offers', load: () => import('./commands/invitation.js') },
  vibe: { summary: 'create, rename, delete and reorder vibes', load: () => import('./commands/vibe.js') },
  cut: { summary: 'create, rename, move, check, delete, download and share cuts', load: () => import('./commands/cut.js') },
  file: { summary: 'upload, list, show, download, share, unshare and delete files', load: () => import('./commands/file.js') },
  comment: { summary: 'comment on moments of a mix, reply, resolve, list an inbox, export markers for a DAW', load: () => import('./commands/comment.js') },
  review: { summary: 'approve a version or request changes, ask members to review; status: the release gate of CI (exit 7)', load: () => import('./commands/review.js') },
  share: { summary: 'list the public links of a file or cut, revoke one', load: () => import('./commands/share.js') },
  storage: { summary: 'how much you store, by type; site admins: by user or project, the largest files', load: () => import('./commands/storage.js') },
  token: { summary: 'create, list and revoke personal access tokens (for CI: BAND_TOKEN)', load: () => import('./commands/token.js') },
  notify: { summary: 'what you are emailed about: mentions, replies, review requests, new versions, the digest', load: () => import('./commands/notify.js') },
  webhook: { summary: 'notify CI, apps and chats of what happens: add, list, test webhooks; see and redo deliveries', load: () => import('./commands/webhook.js') },
  trash: { summary: 'what deletes kept: list the trash, restore from it, purge for good', load: () => import('./commands/trash.js') },
  user: { summary: 'site admins: list accounts, deactivate or activate one', load: () => import('./commands/user.js') },
  admin: { summary: 'site admins: the background job queue, and retrying a failed job', load: () => import('./commands/admin.js') },
  publish: { summary: 'upload a file (creating its project, vibe and cut) and share it: for CI', load: () => import('./commands/publish.js') },
  push: { summary: 'upload what changed in a session folder to a cut (new versions, new files with their path)', load: () => import('./commands/push.js') },
  pull: { summary: 'download what changed on a cut into a session folder, never overwriting local changes', load: () => import('./commands/pull.js') },
  watch: { summary: 'print the events of your projects as they happen', load: () => import('./commands/watch.js') },
  completion: { summary: 'print a shell completion script (bash, zsh, fish)', load: () => import('./commands/completion.js') },
};

/** Help is wrapped at this width, or a narrower terminal's. */
export const HELP_WIDTH = 80;

/** Global flags that take a value, so the group name can be found without parsing. */
const VALUE_FLAGS = new Set(['--api-url', '--profile']);

const HELP_FOOTER = `
Environment:
  BAND_API_URL      server address (default http://localhost:3000, or the profile's)
  BAND_PROFILE      profile name (default "default")
  BAND_TOKEN        a personal access token (bcp_…, band token create) or an access
                    token to use; nothing is stored
  BAND_EMAIL, BAND_PASSWORD
                    log in for this run only (CI); nothing is stored
  BAND_CONFIG_DIR   settings and credential files (default $XDG_CONFIG_HOME/band, else ~/.config/band)
  NO_COLOR          no colours;  CI  no progress bars or spinners

Examples:
  $ band auth login
  $ band project list
  $ band file upload "takes/*.wav" --project Demo --vibe Verse --cut "Take 3" --jobs 8
  $ band push ~/Sessions/Demo --cut "Demo/Verse/Take 3"
  $ band publish mix.mp3 --project Demo --vibe Mixes --cut Final --create --share --expires 7d

Exit codes: band help exit-codes`;

export function targetGroup(args: readonly string[]): string | undefined {
  const operands: string[] = [];
  for (let i = 0; i < args.length && operands.length < 2; i += 1) {
    const arg = args[i]!;
    if (arg === '--') break;
    if (VALUE_FLAGS.has(arg)) i += 1;
    else if (!arg.startsWith('-')) operands.push(arg);
  }
  return operands[0] === 'help' ? operands[1] : operands[0];
}

/** Where commander writes: a terminal's width wraps the help. */
interface HelpOutput {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export function buildProgram(io: { stdout: HelpOutput; stderr: HelpOutput }): Command {
  return new Command('band')
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // At most 80 columns, as band.cts answers `band --help` from the text the build wrote at 80.
      getOutHelpWidth: () => Math.min(HELP_WIDTH, io.stdout.isTTY ? (io.stdout.columns ?? HELP_WIDTH) : HELP_WIDTH),
      getErrHelpWidth: () => Math.min(HELP_WIDTH, io.stderr.isTTY ? (io.stderr.columns ?? HELP_WIDTH) : HELP_WIDTH),
      // band's help has no styles; commander would otherwise ask process.stdout.
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .description('bandcollab from the command line: projects, vibes, cuts and their files')
    .version(packageJson.version, '-V, --version')
    .option('--api-url <url>', 'server address (env BAND_API_URL); stored credentials are used only for the server that issued them')
    .option('--profile <name>', 'settings and credentials profile (env BAND_PROFILE)')
    .option('--json', 'print only the API records, as JSON, on stdout')
    .option('-q, --quiet', 'print only what was asked for (lists, records, links): no messages, no confirmations, no progress')
    .option('--no-progress', 'no progress bars or progress lines')
    .option('--no-color', 'no colours (also env NO_COLOR)')
    .option('-y, --yes', 'do not ask before destructive commands (required off a terminal)')
    .option('--debug', 'print debug lines (what failed quietly: a server-side logout, a project name lookup)')
    .option('--insecure-storage', 'keep credentials in a 0600 file instead of the OS keychain')
    .helpCommand('help [command]', 'show help for a command, or "band help exit-codes"')
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', HELP_FOOTER)
    .exitOverride();
}

/** `band --help`, `band -h` and `band help`: the root help, as a run answers it off a terminal (each group a one-line stub). */
export function rootHelp(): string {
  let text = '';
  const program = buildProgram({ stdout: { write: (chunk: string) => (text += chunk) }, stderr: process.stderr });
  for (const [name, group] of Object.entries(GROUPS)) program.command(name).description(group.summary);
  program.outputHelp();
  return text;
}
