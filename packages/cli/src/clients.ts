// The SDK clients of one command run: anonymous (register, login) or signed in from, in this order,
// BAND_TOKEN (a personal access token bcp_…, or an access token), BAND_EMAIL + BAND_PASSWORD, or the tokens
// stored for that server's origin (never those another server issued).
import type { BandClient, BandClientOptions } from '@bandcollab/sdk';
import { signInFailure } from './errors.js';
import { CliError, EXIT } from './exit-codes.js';
import type { Factory } from './factory.js';
import type { Io } from './io.js';
import { loadedLibraries } from './libraries.js';
import type { Logins } from './logins.js';
import packageJson from '../package.json' with { type: 'json' };

const PERSONAL_ACCESS_TOKEN_PREFIX = 'bcp_';

/** What the clients depend on (of the run's Context): the machine, the profile and the server. */
interface ClientScope {
  readonly io: Io;
  readonly profile: string;
  readonly apiUrl: string;
}

/** Where the signed-in identity of this run comes from. */
export type TokenSource = 'BAND_TOKEN' | 'BAND_EMAIL' | 'stored';

/** The SDK clients of one command run, for the server and profile of its context. */
export class Clients {
  private client: BandClient | undefined;
  private sessionKept = false;
  source: TokenSource | undefined;

  constructor(
    private readonly ctx: ClientScope,
    private readonly factory: Factory,
    private readonly logins: Logins,
  ) {}

  /** A client that sends no credentials (register, login). */
  anonymous(): BandClient {
    return this.newClient({});
  }

  /** A signed-in client; exit 4 with a hint when there is nobody to sign in as. */
  async signedIn(): Promise<BandClient> {
    if (this.client) return this.client;
    const envToken = this.ctx.io.env.BAND_TOKEN;
    if (envToken) {
      this.source = 'BAND_TOKEN';
      // A personal access token (bcp_…) is used as it is; anything else is taken for an access token.
      this.client = this.newClient(envToken.startsWith(PERSONAL_ACCESS_TOKEN_PREFIX) ? { token: envToken } : { accessToken: envToken });
      return this.client;
    }
    const email = this.ctx.io.env.BAND_EMAIL;
    const password = this.ctx.io.env.BAND_PASSWORD;
    if (email && password) {
      // For this run only: the pair stays in memory, so the SDK may refresh it on its own.
      this.source = 'BAND_EMAIL';
      const client = this.anonymous();
      await client.auth.login({ email, password }).catch((error: unknown) => Promise.reject(signInFailure(error)));
      this.client = client;
      return client;
    }
    this.source = 'stored';
    const store = await this.logins.store();
    const tokens = store ? await store.read() : null;
    if (!store || !tokens) {
      // A server that does not answer is the thing to fix first: logging in there would fail the same way.
      await this.anonymous()
        .health()
        .catch((error: unknown) => {
          if (error instanceof loadedLibraries()!.sdk.BandNetworkError) throw error;
        });
      throw new CliError(`not logged in to ${this.ctx.apiUrl} (profile ${this.ctx.profile}): run band auth login`, EXIT.auth);
    }
    // The SDK refreshes when due, through the store and under the profile's lock, as other band processes do.
    this.client = this.newClient({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, tokenStore: this.logins.tokenStore(store) });
    return this.client;
  }

  /**
   * Keeps a BAND_EMAIL session open after this run, for a command whose output is a credential meant to be
   * used afterwards (`band auth token`). The session still ends on its own, a day after the sign-in.
   */
  keepSession(): void {
    this.sessionKept = true;
  }

  /** Ends what this run started: a BAND_EMAIL sign-in is a session of its own, so it is closed. */
  async close(): Promise<void> {
    if (this.source === 'BAND_EMAIL' && this.client && !this.sessionKept) await this.client.auth.logout().catch(() => undefined);
  }

  private newClient(tokens: Pick<BandClientOptions, 'token' | 'accessToken' | 'refreshToken' | 'tokenStore'>): BandClient {
    return this.factory.newClient({ baseUrl: this.ctx.apiUrl, userAgent: `band/${packageJson.version}`, ...tokens });
  }
}
