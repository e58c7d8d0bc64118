// What every command starts from: the global flags, the profile's settings (conf), the server address and
// an SDK client signed in from, in this order, BAND_TOKEN (a personal access token bcp_…, or an access
// token), BAND_EMAIL + BAND_PASSWORD, or the tokens stored for that server's origin (never those another
// server issued).
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { BandClient, BandClientOptions, ResumeStore, TokenPair, TokenStore } from '@bandcollab/sdk';
import type { Command } from 'commander';
import {
  credentialFile,
  type CredentialStore,
  FileStore,
  openKeychain,
  type StoreKind,
  type StoredTokens,
  withProfileLock,
} from './credentials.js';
import { CliError, EXIT, exitCodeForStatus, usageError } from './exit-codes.js';
import type { Io } from './io.js';
import { Output } from './render.js';
import packageJson from '../package.json' with { type: 'json' };

const DEFAULT_API_URL = 'http://localhost:3000';
const PERSONAL_ACCESS_TOKEN_PREFIX = 'bcp_';

/**
 * The SDK (undici, form-data) is most of the CLI's code: it is loaded when a command runs, not when its group
 * is registered, so `--help` and usage errors do not pay for it.
 */
interface Libraries {
  sdk: typeof import('@bandcollab/sdk');
}
let libraries: Libraries | undefined;

async function loadLibraries(): Promise<Libraries> {
  libraries = { sdk: await import('@bandcollab/sdk') };
  return libraries;
}

/**
 * The settings of every profile, in conf's file (`config.json`: one JSON object by profile name). Commands read
 * it here and save through conf, which is loaded only to save: it imports ajv and semver, for schemas and
 * migrations band does not use, about 20 ms of a command such as `band project list` that only reads.
 */
class SettingsFile {
  constructor(private readonly dir: string) {}

  read(profile: string): ProfileSettings {
    let all: Record<string, ProfileSettings>;
    try {
      all = JSON.parse(readFileSync(path.join(this.dir, 'config.json'), 'utf8')) as Record<string, ProfileSettings>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    // A profile named like an Object.prototype key ("constructor") has no settings until it saves some.
    return Object.hasOwn(all, profile) ? all[profile]! : {};
  }

  async write(profile: string, settings: ProfileSettings): Promise<void> {
    const { default: Conf } = await import('conf');
    const conf = new Conf<Record<string, ProfileSettings>>({
      projectName: 'band',
      cwd: this.dir,
      configName: 'config',
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
    });
    conf.set(profile, settings);
  }
}

export interface GlobalOptions {
  apiUrl?: string;
  profile?: string;
  json: boolean;
  quiet: boolean;
  progress: boolean;
  color: boolean;
  yes: boolean;
  debug: boolean;
  insecureStorage: boolean;
}

export interface ProfileUser {
  id: string;
  email: string;
  name: string;
}

/** A login on one server: who, and where its tokens are. */
export interface Login {
  credentialStore: StoreKind;
  user: ProfileUser;
}

export interface ProfileSettings {
  /** The server commands go to when neither --api-url nor BAND_API_URL names one: the last one logged in to. */
  apiUrl?: string;
  /** By server origin. */
  logins?: Record<string, Login>;
}

/** How band before per-server logins kept the one login of a profile, beside `apiUrl`. */
interface LegacySettings extends ProfileSettings {
  credentialStore?: StoreKind;
  user?: ProfileUser;
}

/** Where the signed-in identity of this run comes from. */
export type TokenSource = 'BAND_TOKEN' | 'BAND_EMAIL' | 'stored';

export class Context {
  readonly out: Output;
  readonly profile: string;
  readonly configDir: string;
  readonly apiUrl: string;
  /** What stored credentials are bound to. */
  readonly origin: string;
  private readonly settingsFile: SettingsFile;
  private client: BandClient | undefined;
  private sessionKept = false;
  source: TokenSource | undefined;

  constructor(
    readonly options: GlobalOptions,
    private readonly lib: Libraries,
    readonly io: Io,
  ) {
    this.out = new Output(options, io);
    this.profile = options.profile ?? io.env.BAND_PROFILE ?? 'default';
    // The name becomes part of file names (credentials, lock).
    if (!/^[\w.-]{1,64}$/.test(this.profile) || this.profile.startsWith('.')) {
      throw usageError(`profile names are letters, digits, ".", "-" and "_" (not "${this.profile}")`);
    }
    this.configDir = configDirectory(io);
    this.settingsFile = new SettingsFile(this.configDir);
    this.apiUrl = (options.apiUrl ?? io.env.BAND_API_URL ?? this.settings.apiUrl ?? DEFAULT_API_URL).replace(/\/+$/, '');
    this.origin = originOf(this.apiUrl);
  }

  static async of(command: Command, io: Io): Promise<Context> {
    return new Context(command.optsWithGlobals<GlobalOptions>(), libraries ?? (await loadLibraries()), io);
  }

  /** A path from the command line, relative to the working directory band runs in. */
  localPath(relative: string): string;
  localPath(relative: string | undefined): string | undefined;
  localPath(relative: string | undefined): string | undefined {
    return relative === undefined ? undefined : path.resolve(this.io.cwd, relative);
  }

  /**
   * Where `-o <output>` saves `filename`: `output` as given (the file inside it when it names a directory), else
   * `filename` here. As the user wrote it, for messages: `localPath` resolves it.
   */
  async saveTarget(output: string | undefined, filename: string): Promise<string> {
    const target = output ?? filename;
    const found = await stat(this.localPath(target)).catch(() => null);
    return found?.isDirectory() ? path.join(target, filename) : target;
  }

  get settings(): ProfileSettings {
    return this.settingsFile.read(this.profile);
  }

  saveSettings(settings: ProfileSettings): Promise<void> {
    return this.settingsFile.write(this.profile, settings);
  }

  /**
   * Where unfinished resumable uploads to this server are remembered between runs, per profile and origin:
   * `uploads/<profile>@<origin>.json` in the config directory.
   */
  resumeStore(): ResumeStore {
    const name = path.basename(credentialFile(this.configDir, this.profile, this.origin));
    return new this.lib.sdk.FileResumeStore(path.join(this.configDir, 'uploads', name));
  }

  /** A client that sends no credentials (register, login). */
  anonymousClient(): BandClient {
    return this.newClient({});
  }

  /** A signed-in client; exit 4 with a hint when there is nobody to sign in as. */
  async signedIn(): Promise<BandClient> {
    if (this.client) return this.client;
    const envToken = this.io.env.BAND_TOKEN;
    if (envToken) {
      this.source = 'BAND_TOKEN';
      // A personal access token (bcp_…) is used as it is; anything else is taken for an access token.
      this.client = this.newClient(envToken.startsWith(PERSONAL_ACCESS_TOKEN_PREFIX) ? { token: envToken } : { accessToken: envToken });
      return this.client;
    }
    const email = this.io.env.BAND_EMAIL;
    const password = this.io.env.BAND_PASSWORD;
    if (email && password) {
      // For this run only: the pair stays in memory, so the SDK may refresh it on its own.
      this.source = 'BAND_EMAIL';
      const client = this.anonymousClient();
      await client.auth.login({ email, password });
      this.client = client;
      return client;
    }
    this.source = 'stored';
    const store = await this.credentialStore();
    const tokens = store ? await store.read() : null;
    if (!store || !tokens) throw new CliError(`not logged in to ${this.apiUrl} (profile ${this.profile}): run band auth login`, EXIT.auth);
    // The SDK refreshes when due, through the store and under the profile's lock, as other band processes do.
    this.client = this.newClient({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, tokenStore: this.tokenStore(store) });
    return this.client;
  }

  /**
   * Stores a fresh sign-in (login, register, web login) for this profile on this server; logins on other
   * servers stay. This server becomes the profile's default.
   */
  async saveSignIn(pair: TokenPair, user: ProfileUser): Promise<CredentialStore> {
    // The pair of an earlier login here goes, wherever it was (a keychain that is gone now is no reason to fail).
    const previous = await this.credentialStore().catch(() => null);
    await previous?.remove().catch(() => undefined);
    const store = await this.chooseStore();
    await store.write(toStored(pair, this.io.now()));
    const { logins } = this.settings;
    await this.saveSettings({ ...this.settings, apiUrl: this.apiUrl, logins: { ...logins, [this.origin]: { credentialStore: store.kind, user } } });
    return store;
  }

  /** Forgets this profile's login on this server (its tokens must be removed first). */
  async forgetSignIn(): Promise<void> {
    const logins = { ...this.settings.logins };
    delete logins[this.origin];
    await this.saveSettings({ ...this.settings, logins });
  }

  /** The store of this profile's tokens for this server, or null when it never signed in here. */
  async credentialStore(): Promise<CredentialStore | null> {
    await this.adoptLegacyLogin();
    const kind = this.settings.logins?.[this.origin]?.credentialStore;
    return kind ? this.openStore(kind, this.origin) : null;
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

  private async openStore(kind: StoreKind, origin: string): Promise<CredentialStore> {
    if (kind === 'file') return new FileStore(credentialFile(this.configDir, this.profile, origin));
    const keychain = await openKeychain(this.profile, origin, this.io.loadKeytar);
    if ('unavailable' in keychain) throw new CliError(`the OS keychain holding your credentials is unavailable: ${keychain.unavailable}`, EXIT.auth);
    return keychain;
  }

  /**
   * A login stored by an earlier band (one per profile: `credentials/<profile>.json` or the keychain account
   * `<profile>@<apiUrl>`) was issued by the server saved with it: it becomes that server's login.
   */
  private async adoptLegacyLogin(): Promise<void> {
    const { credentialStore: kind, user, ...settings } = this.settings as LegacySettings;
    if (!kind) return;
    let logins = settings.logins;
    if (user && settings.apiUrl) {
      const legacy =
        kind === 'file'
          ? new FileStore(path.join(this.configDir, 'credentials', `${this.profile}.json`))
          : await this.openStore(kind, settings.apiUrl); // the account named the API URL, not its origin
      const tokens = await legacy.read();
      // Removed before writing: for a keychain, the old account is often the new one.
      await legacy.remove();
      if (tokens) {
        const origin = originOf(settings.apiUrl);
        await (await this.openStore(kind, origin)).write(tokens);
        logins = { ...logins, [origin]: { credentialStore: kind, user } };
      }
    }
    await this.saveSettings({ ...settings, logins });
  }

  private newClient(tokens: Pick<BandClientOptions, 'token' | 'accessToken' | 'refreshToken' | 'tokenStore'>): BandClient {
    return new this.lib.sdk.BandClient({ baseUrl: this.apiUrl, userAgent: `band/${packageJson.version}`, ...tokens });
  }

  /** The stored pair as the SDK's token store: every band process of this profile refreshes it under one lock. */
  private tokenStore(store: CredentialStore): TokenStore {
    const lockPath = path.join(this.configDir, `${this.profile}.refresh.lock`);
    return {
      load: async () => (await store.read()) ?? undefined,
      save: (pair) => store.write(toStored(pair, this.io.now())),
      withRefreshLock: (refresh) => withProfileLock(lockPath, refresh),
    };
  }

  private async chooseStore(): Promise<CredentialStore> {
    const file = new FileStore(credentialFile(this.configDir, this.profile, this.origin));
    if (this.options.insecureStorage) {
      this.out.notice(`storing credentials in ${file.location} (--insecure-storage)`);
      return file;
    }
    const keychain = await openKeychain(this.profile, this.origin, this.io.loadKeytar);
    if (!('unavailable' in keychain)) return keychain;
    this.out.notice(`no OS keychain (${keychain.unavailable}); storing credentials in ${file.location} (mode 0600)`);
    return file;
  }
}

/** scheme://host[:port] of an http(s) address, as URL normalises it: lower case, no default port. */
function originOf(apiUrl: string): string {
  const url = URL.canParse(apiUrl) ? new URL(apiUrl) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') throw usageError(`the server address must be an http or https URL, not "${apiUrl}"`);
  return url.origin;
}

function toStored(pair: TokenPair, now: number): StoredTokens {
  return { accessToken: pair.accessToken, refreshToken: pair.refreshToken, accessTokenExpiresAt: now + pair.expiresIn * 1000 };
}

/** BAND_CONFIG_DIR, else $XDG_CONFIG_HOME/band, else ~/.config/band. */
function configDirectory(io: Io): string {
  if (io.env.BAND_CONFIG_DIR) return path.resolve(io.cwd, io.env.BAND_CONFIG_DIR);
  const base = io.env.XDG_CONFIG_HOME || path.join(io.homeDir, '.config');
  return path.join(base, 'band');
}

/** Turns anything thrown by a command into the one line and exit code the user gets. */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  // Without the SDK loaded, no SDK error can have been thrown.
  const { BandApiError, BandNetworkError, STATUS_BY_CODE } = libraries?.sdk ?? {};
  if (BandApiError && error instanceof BandApiError) {
    // The server's detail of a validation failure usually is its field messages already: each is said once.
    const fields = error.errors
      .map((field) => `${field.field}: ${field.message}`)
      .filter((text) => !error.detail.includes(text))
      .join('; ');
    const wait = error.retryAfter ? ` (retry after ${error.retryAfter} s)` : '';
    // A code this CLI does not know yet (a newer server's) has no entry: its answer's status stands.
    return new CliError(`${error.detail}${fields ? ` (${fields})` : ''}${wait}`, exitCodeForStatus(STATUS_BY_CODE![error.code] ?? error.status), error.requestId ?? undefined);
  }
  if (BandNetworkError && error instanceof BandNetworkError) return new CliError(error.message, EXIT.unavailable);
  if (error instanceof Error && error.name === 'AbortError') return new CliError('interrupted', EXIT.interrupted);
  return new CliError(error instanceof Error ? error.message : String(error), EXIT.error);
}

/** Wraps a command action: builds the context from the flags and closes it afterwards. */
export type Run = <A extends unknown[]>(work: (ctx: Context, ...args: A) => Promise<void>) => (...args: unknown[]) => Promise<void>;

/** The `run` of the command groups of one band run, on its Io. */
export function commandRunner(io: Io): Run {
  return <A extends unknown[]>(work: (ctx: Context, ...args: A) => Promise<void>) => async (...args: unknown[]) => {
    const ctx = await Context.of(args[args.length - 1] as Command, io);
    try {
      await work(ctx, ...(args.slice(0, -1) as A));
    } finally {
      await ctx.close();
    }
  };
}
