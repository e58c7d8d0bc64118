import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthResult, BandApiError, BandClient } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { type Context, commandRunner, toCliError } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import type { Io } from '../io.js';
import { ask, askSecret, confirm, isInteractive, readStdin } from '../prompt.js';
import { type Spinner, withExamples } from '../render.js';
import {
  accountDeletedView,
  linkedView,
  loggedOutView,
  openInBrowserView,
  passwordChangedView,
  profileView,
  signedInView,
  statusView,
} from '../views.js';

/** How long `band auth login --web` waits for the browser to come back. */
const WEB_LOGIN_TIMEOUT_MS = 5 * 60_000;

interface CredentialOptions {
  email?: string;
  passwordStdin?: boolean;
}

export function register(auth: Command, io: Io): void {
  const run = commandRunner(io);
  withExamples(auth, 'band auth login', 'band auth status');

  withExamples(
    auth
      .command('register')
      .description('create an account and log in (on a terminal: asks for what is missing, and again for what the server refused)')
      .option('--email <email>', 'your email (asked on a terminal when missing)')
      .option('--name <name>', 'your display name (asked on a terminal when missing)')
      .option('--password-stdin', 'read the password from stdin')
      .option('--invite <link>', 'an invitation link (or its token) to your email: join its project too')
      .action(
        run(async (ctx, options: CredentialOptions & { name?: string; invite?: string }) => {
          const asked = new Set<RegisterField>();
          const ask = async (field: RegisterField): Promise<string> => {
            asked.add(field);
            return field === 'password' ? askNewPassword(ctx) : askOrFail(ctx, field === 'email' ? 'Email: ' : 'Name: ', `--${field}`);
          };
          const fields: Record<RegisterField, string> = {
            email: options.email ?? (await ask('email')),
            name: options.name ?? (await ask('name')),
            password: options.passwordStdin ? await readStdin(ctx.io) : await ask('password'),
          };
          const client = ctx.anonymousClient();
          const sdk = await import('@bandcollab/sdk');
          const inviteToken = options.invite === undefined ? undefined : sdk.invitationToken(options.invite);
          let registered: AuthResult | undefined;
          while (!registered) {
            try {
              registered = await client.auth.register({ ...fields, ...(inviteToken === undefined ? {} : { inviteToken }) });
            } catch (error) {
              // On a terminal, what the server refused in an answer is asked again, and only that.
              const failed = error instanceof sdk.BandApiError ? refusedFields(error) : [];
              if (failed.length === 0 || !failed.every((field) => asked.has(field))) throw error;
              ctx.out.error(toCliError(error).message);
              for (const field of failed) fields[field] = await ask(field);
            }
          }
          await signedIn(ctx, registered, inviteToken === undefined ? 'Registered and logged in' : 'Registered (and accepted the invitation) and logged in');
        }),
      ),
    'band auth register',
    'band auth register --invite https://band.example.com/invite/2bX…',
    'printf %s "$PASSWORD" | band auth register --email ana@example.com --name Ana --password-stdin',
  );

  withExamples(
    auth
      .command('login')
      .description('log in: by prompt, with --email and --password-stdin, or in the browser with --web')
      .option('--email <email>', 'your email (asked on a terminal when missing)')
      .option('--password-stdin', 'read the password from stdin')
      .option('--web', "log in through the server's identity provider, in the browser")
      .action(
        run(async (ctx, options: CredentialOptions & { web?: boolean }) => {
          if (options.web) return webLogin(ctx);
          const email = options.email ?? (await askOrFail(ctx, 'Email: ', '--email'));
          const password = await readPassword(ctx, options);
          const client = ctx.anonymousClient();
          await signedIn(ctx, await client.auth.login({ email, password, rememberMe: true }), 'Logged in');
          await replaceOneTimePassword(ctx, client, password);
        }),
      ),
    'band auth login',
    'band auth login --email ana@example.com --password-stdin < password.txt',
    'band auth login --web',
    'band --profile staging --api-url https://band.staging.example.com auth login',
  );

  withExamples(
    auth
      .command('link')
      .description("link your account to your account at the server's identity provider, so that login --web signs in to it")
      .option('--web', 'in the browser (the only way to link)')
      .action(
        run(async (ctx, options: { web?: boolean }) => {
          if (!options.web) throw usageError('linking happens in the browser: band auth link --web');
          await webLink(ctx);
        }),
      ),
    'band auth link --web',
  );

  withExamples(
    auth
      .command('logout')
      .description("end the session on the server and forget the credentials stored for it (other servers' stay)")
      .action(
        run(async (ctx) => {
          const store = await ctx.credentialStore();
          const tokens = store ? await store.read() : null;
          if (store && tokens) {
            const client = ctx.anonymousClient();
            client.setTokens({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken });
            await client.auth.logout().catch((error: unknown) => ctx.out.debugLine(`server logout failed: ${String(error)}`));
            await store.remove();
          }
          await ctx.forgetSignIn();
          ctx.out.done({ ok: true }, () => loggedOutView(tokens !== null, ctx.apiUrl));
        }),
      ),
    'band auth logout',
  );

  withExamples(
    auth
      .command('status')
      .description('who you are, on which server, and where the credentials are kept')
      .action(
        run(async (ctx) => {
          const client = await ctx.signedIn();
          const { me, token } = await client.tokens.current();
          const location = await credentialLocation(ctx);
          const where = { apiUrl: ctx.apiUrl, profile: ctx.profile, credentials: location };
          if (!token) return ctx.out.record(me, () => statusView(me, where));
          // The projects a token reaches are all it lists: their names, for the ids it is limited to.
          const projectNames = new Map((await client.projects.list()).map((p) => [p.id, p.name]));
          ctx.out.record({ ...me, token }, () => statusView(me, where, { token, projectNames }));
        }),
      ),
    'band auth status',
    'band auth status --json',
  );

  withExamples(
    auth
      .command('profile')
      .description('show your display name and avatar, or change them')
      .option('--name <name>', 'a new display name')
      .option('--avatar <path>', 'a new avatar: a JPEG, PNG, GIF or WebP image of at most 5 MiB')
      .option('--remove-avatar', 'remove your avatar')
      .action(
        run(async (ctx, options: { name?: string; avatar?: string; removeAvatar?: boolean }) => {
          if (options.avatar !== undefined && options.removeAvatar) throw usageError('--avatar and --remove-avatar exclude each other');
          const client = await ctx.signedIn();
          let me = options.name === undefined ? null : await client.auth.updateMe({ name: options.name });
          if (options.avatar !== undefined) me = await client.auth.setAvatar(ctx.localPath(options.avatar));
          if (options.removeAvatar) me = await client.auth.removeAvatar();
          const shown = me ?? (await client.auth.me());
          ctx.out.record(shown, () => profileView(shown));
        }),
      ),
    'band auth profile',
    'band auth profile --name "Ana B." --avatar me.jpg',
    'band auth profile --remove-avatar',
  );

  withExamples(
    auth
      .command('password')
      .description('change your password; your other sessions end (personal access tokens only with --revoke-tokens)')
      .option('--password-stdin', 'read the current password and the new one from stdin, on two lines (the first empty for an account without a password)')
      .option('--revoke-tokens', 'also revoke every personal access token of the account')
      .action(
        run(async (ctx, options: { passwordStdin?: boolean; revokeTokens?: boolean }) => {
          const client = await ctx.signedIn();
          let currentPassword: string;
          let newPassword: string;
          if (options.passwordStdin) {
            [currentPassword, newPassword] = await twoLines(ctx);
          } else {
            if (!isInteractive(ctx.io)) throw usageError('--password-stdin is required when not on a terminal');
            currentPassword = await askSecret(ctx.io, 'Current password (empty if your account has none): ');
            newPassword = await askNewPassword(ctx, CHANGE_PROMPTS);
          }
          const changed = await client.auth.changePassword({
            newPassword,
            revokeTokens: options.revokeTokens === true,
            ...(currentPassword === '' ? {} : { currentPassword }),
          });
          ctx.out.record(changed, () => passwordChangedView(ctx.out, changed));
        }),
      ),
    'band auth password',
    'band auth password --revoke-tokens',
    'printf "%s\\n%s\\n" "$OLD" "$NEW" | band auth password --password-stdin',
  );

  withExamples(
    auth
      .command('delete-account')
      .description('delete your account for good: projects where you are the only member go with it, your files in others stay')
      .option('--password-stdin', 'read the password from stdin (empty for an account without a password)')
      .action(
        run(async (ctx, options: { passwordStdin?: boolean }) => {
          const client = await ctx.signedIn();
          const me = await client.auth.me();
          await confirm(
            ctx.io,
            `Delete your account ${me.email} on ${ctx.apiUrl}, with every project where you are the only member?`,
            ctx.options.yes,
          );
          let password: string;
          if (options.passwordStdin) password = await readStdin(ctx.io);
          else if (isInteractive(ctx.io)) password = await askSecret(ctx.io, 'Password (empty if your account has none): ');
          else throw usageError('--password-stdin is required when not on a terminal');
          await client.auth.deleteAccount(password === '' ? { confirm: me.email } : { password });
          await (await ctx.credentialStore())?.remove();
          await ctx.forgetSignIn();
          ctx.out.record({ id: me.id, deleted: true }, () => accountDeletedView(me.email, ctx.apiUrl));
        }),
      ),
    'band auth delete-account',
    'band --yes auth delete-account --password-stdin < password.txt',
  );

  withExamples(
    auth
      .command('token')
      .description('print a valid access token (refreshed when needed), for scripts')
      .action(
        run(async (ctx) => {
          const client = await ctx.signedIn();
          const token = await client.freshAccessToken();
          if (!token) throw new CliError('not logged in: run band auth login', EXIT.auth);
          // The token is for use after this run: a BAND_EMAIL sign-in must not be logged out at its end.
          ctx.keepSession();
          ctx.io.stdout.write(`${token}\n`);
        }),
      ),
    'curl -H "Authorization: Bearer $(band auth token)" http://localhost:3000/api/auth/me',
  );
}

async function signedIn(ctx: Context, result: AuthResult, verb: string): Promise<void> {
  const store = await ctx.saveSignIn(result, { id: result.user.id, email: result.user.email, name: result.user.name });
  ctx.out.done(result.user, () => signedInView(verb, ctx.apiUrl, result.user, store.location));
}

/**
 * After an admin's reset-password the account must set a new password before anything else: on a terminal
 * band asks for it now; elsewhere it says how, and fails, since every other command would.
 */
async function replaceOneTimePassword(ctx: Context, client: BandClient, oneTimePassword: string): Promise<void> {
  const { BandApiError } = await import('@bandcollab/sdk');
  try {
    await client.auth.me();
    return;
  } catch (error) {
    if (!(error instanceof BandApiError && error.code === 'PASSWORD_CHANGE_REQUIRED')) throw error;
  }
  if (!isInteractive(ctx.io)) {
    throw new CliError(
      'this account has a one-time password from an admin: set your own before anything else, with band auth password ' +
        '(--password-stdin: the one-time password and the new one on two lines)',
      EXIT.auth,
    );
  }
  ctx.out.notice('An admin reset your password: choose your own now.');
  const changed = await client.auth.changePassword({ currentPassword: oneTimePassword, newPassword: await askNewPassword(ctx, CHANGE_PROMPTS) });
  ctx.out.notice(passwordChangedView(ctx.out, changed));
}

/** The two lines of --password-stdin: the current password (may be empty) and the new one. */
async function twoLines(ctx: Context): Promise<[string, string]> {
  const lines = (await readStdin(ctx.io)).split(/\r?\n/);
  if (lines.length !== 2 || lines[1] === '') throw usageError('--password-stdin takes two lines: the current password, then the new one');
  return [lines[0]!, lines[1]!];
}

async function credentialLocation(ctx: Context): Promise<string> {
  if (ctx.source === 'BAND_TOKEN') return 'BAND_TOKEN environment variable (nothing stored)';
  if (ctx.source === 'BAND_EMAIL') return 'BAND_EMAIL and BAND_PASSWORD, for this run only (nothing stored)';
  const store = await ctx.credentialStore();
  return store?.kind === 'file' ? `${store.location} (file, mode 0600)` : 'the OS keychain';
}

async function askOrFail(ctx: Context, question: string, flag: string): Promise<string> {
  if (!isInteractive(ctx.io)) throw usageError(`${flag} is required when not on a terminal`);
  const answer = await ask(ctx.io, question);
  if (!answer) throw usageError(`${flag.slice(2)} must not be empty`);
  return answer;
}

type RegisterField = 'email' | 'name' | 'password';

/** The server's password rule (registerRequest in the contract), said before a new password is asked for. */
const PASSWORD_RULE = 'A password needs at least 8 characters.';

/** The fields of a refused registration that an answer of the user could fix. */
function refusedFields(error: BandApiError): RegisterField[] {
  if (error.code === 'EMAIL_TAKEN') return ['email'];
  if (error.code !== 'VALIDATION_FAILED') return [];
  const fields = new Set(error.errors.map((field) => field.field));
  return (['email', 'name', 'password'] as const).filter((field) => fields.has(field));
}

const REGISTER_PROMPTS = { first: 'Password: ', again: 'Password again: ' };
const CHANGE_PROMPTS = { first: 'New password: ', again: 'Repeat the new password: ' };

/** A new password on a terminal: the rule first, then asked twice until both answers are the same. */
async function askNewPassword(ctx: Context, prompts = REGISTER_PROMPTS): Promise<string> {
  if (!isInteractive(ctx.io)) throw usageError('--password-stdin is required when not on a terminal');
  ctx.out.info(PASSWORD_RULE);
  for (;;) {
    const password = await askSecret(ctx.io, prompts.first);
    if ((await askSecret(ctx.io, prompts.again)) === password) return password;
    ctx.out.error('the two passwords differ; once more');
  }
}

async function readPassword(ctx: Context, options: CredentialOptions): Promise<string> {
  if (options.passwordStdin) return readStdin(ctx.io);
  if (!isInteractive(ctx.io)) throw usageError('--password-stdin is required when not on a terminal');
  return askSecret(ctx.io, 'Password: ');
}

/**
 * Sign-in through the identity provider: a one-shot HTTP listener on a loopback port receives the
 * provider's one-time code, which is traded for tokens. The code is bound to this process: the sign-in starts
 * with the S256 challenge of a verifier that only this process knows, and the exchange must present it, so a
 * code caught on its way to the listener is worth nothing.
 */
async function webLogin(ctx: Context): Promise<void> {
  const client = ctx.anonymousClient();
  const { codeVerifier, codeChallenge } = pkcePair();
  const { code, redirectUri } = await awaitBrowser(ctx, {
    start: (cliRedirect) => idpLoginUrl(client, cliRedirect, codeChallenge),
    purpose: 'log in',
    what: 'login',
    success: 'You are logged in to band.',
  });
  await signedIn(ctx, await client.auth.exchangeIdpCode({ code, redirectUri, codeVerifier }), 'Logged in');
}

/**
 * Links the identity provider to the signed-in account: the server, asked with the stored credentials,
 * answers the address that starts the link in the browser; the provider comes back with a one-time code
 * that this process redeems with its verifier and credentials, so the link is made for this process only.
 */
async function webLink(ctx: Context): Promise<void> {
  const client = await ctx.signedIn();
  const me = await client.auth.me();
  const { codeVerifier, codeChallenge } = pkcePair();
  const { code, redirectUri } = await awaitBrowser(ctx, {
    start: (cliRedirect) => client.auth.idpLinkUrl({ cliRedirect, codeChallenge }),
    purpose: 'link your account',
    what: 'linking',
    success: 'Back to band, which links your account.',
  });
  await client.auth.linkIdp({ code, redirectUri, codeVerifier });
  ctx.out.done({ linked: true, user: { id: me.id, email: me.email, name: me.name } }, () => linkedView(me, ctx.apiUrl));
}

interface BrowserStep {
  /** The address to open, given the loopback URL the browser is to come back to. */
  start(cliRedirect: string): Promise<string>;
  /** What the user opens the address for ("log in"). */
  purpose: string;
  /** What fails, when it does. */
  what: 'login' | 'linking';
  /** The page shown in the browser on success. */
  success: string;
}

/** A random verifier, kept in memory, and its S256 challenge (RFC 7636). */
function pkcePair(): { codeVerifier: string; codeChallenge: string } {
  const codeVerifier = randomBytes(32).toString('base64url');
  return { codeVerifier, codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url') };
}

/** Opens `step.start`'s address in the browser and waits for the provider's one-time code at a loopback listener. */
function awaitBrowser(ctx: Context, step: BrowserStep): Promise<{ code: string; redirectUri: string }> {
  // An unguessable path, so another local page cannot hand this listener a code for someone else's account.
  const callbackPath = `/callback/${randomBytes(16).toString('hex')}`;
  return new Promise((resolve, reject) => {
    let redirectUri = '';
    let spinner: Spinner | undefined;
    let finished = false;
    const timer = setTimeout(() => finish(new CliError(`no answer from the browser within ${WEB_LOGIN_TIMEOUT_MS / 60_000} minutes`, EXIT.auth)), WEB_LOGIN_TIMEOUT_MS);
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', redirectUri);
      if (url.pathname !== callbackPath) {
        res.writeHead(404).end();
        return;
      }
      const code = url.searchParams.get('code');
      const failure = url.searchParams.get('authError') ?? 'no code came back';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
      res.end(callbackPage(code ? `${step.success} You can close this tab.` : `The ${step.what} failed (${failure}). You can close this tab.`));
      finish(code ? undefined : new CliError(`${step.what} in the browser failed: ${failure}`, EXIT.auth), code ?? undefined);
    });
    const finish = (error?: Error, code?: string) => {
      finished = true;
      clearTimeout(timer);
      spinner?.stop();
      server.close();
      server.closeAllConnections();
      if (error) reject(error);
      else resolve({ code: code!, redirectUri });
    };
    server.on('error', (error) => finish(error));
    server.listen(0, '127.0.0.1', async () => {
      redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}${callbackPath}`;
      let address: string;
      try {
        address = await step.start(redirectUri);
      } catch (error) {
        finish(error as Error);
        return;
      }
      ctx.out.notice(openInBrowserView(step.purpose, address));
      ctx.io.openBrowser(address);
      spinner = await ctx.out.spinner('waiting for the browser');
      if (finished) spinner.stop();
    });
  });
}

/** The address that starts a browser login; a server without an identity provider says so instead of a browser opening. */
async function idpLoginUrl(client: BandClient, cliRedirect: string, codeChallenge: string): Promise<string> {
  try {
    return await client.auth.idpLoginUrl({ cliRedirect, codeChallenge });
  } catch (error) {
    const { BandApiError } = await import('@bandcollab/sdk');
    if (error instanceof BandApiError && error.code === 'IDP_DISABLED') {
      throw new CliError('this server has no identity provider configured (IDP_DISABLED)', EXIT.notFound);
    }
    throw error;
  }
}

function callbackPage(message: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>band</title></head><body><p>${message.replace(/</g, '&lt;')}</p></body></html>`;
}
