// The browser half of login --web and link --web: a loopback listener for the identity provider's
// one-time code, and the PKCE pair that binds the code to this process.
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Context } from '../../context.js';
import { CliError, EXIT } from '../../exit-codes.js';
import type { Spinner } from '../../render.js';
import { openInBrowserView } from '../../views/auth.js';

/** How long `band auth login --web` waits for the browser to come back. */
const WEB_LOGIN_TIMEOUT_MS = 5 * 60_000;

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
export function pkcePair(): { codeVerifier: string; codeChallenge: string } {
  const codeVerifier = randomBytes(32).toString('base64url');
  return { codeVerifier, codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url') };
}

/** Opens `step.start`'s address in the browser and waits for the provider's one-time code at a loopback listener. */
export function awaitBrowser(ctx: Context, step: BrowserStep): Promise<{ code: string; redirectUri: string }> {
  // An unguessable path, so another local page cannot hand this listener a code for someone else's account.
  const callbackPath = `/callback/${randomBytes(16).toString('hex')}`;
  return new Promise((resolve, reject) => {
    let redirectUri = '';
    let spinner: Spinner | undefined;
    let finished = false;
    const timer = setTimeout(() => finish(new CliError(`no answer from the browser within ${WEB_LOGIN_TIMEOUT_MS / 60_000} minutes`, EXIT.auth)), WEB_LOGIN_TIMEOUT_MS);
    // Not `import`ed: an ES module's namespace of node:http loads the undici inside Node (its WebSocket export),
    // and `band auth --help` would pay for it.
    const server = process.getBuiltinModule('node:http').createServer((req, res) => {
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

function callbackPage(message: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>band</title></head><body><p>${message.replace(/</g, '&lt;')}</p></body></html>`;
}
