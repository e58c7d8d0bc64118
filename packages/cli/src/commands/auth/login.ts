import type { BandClient } from '@bandcollab/sdk';
import type { Command } from 'commander';
import type { Context, Run } from '../../context.js';
import { CliError, EXIT, usageError } from '../../exit-codes.js';
import { askSecret, isInteractive, readStdin } from '../../prompt.js';
import { signInFailure } from '../../errors.js';
import { withExamples } from '../../render.js';
import { passwordChangedView } from '../../views/auth.js';
import { awaitBrowser, pkcePair } from './browser.js';
import { askNewPassword, askOrFail, CHANGE_PROMPTS, type CredentialOptions } from './prompts.js';
import { signedIn } from './sign-in.js';

export function addLogin(auth: Command, run: Run): void {
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
          await signedIn(ctx, await client.auth.login({ email, password, rememberMe: true }).catch((error: unknown) => Promise.reject(signInFailure(error))), 'Logged in');
          await replaceOneTimePassword(ctx, client, password);
        }),
      ),
    'band auth login',
    'band auth login --email ana@example.com --password-stdin < password.txt',
    'band auth login --web',
    'band --profile staging --api-url https://band.staging.example.com auth login',
  );
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
