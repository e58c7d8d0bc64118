// What every command starts from: the global flags, the profile's settings, the server address, and the
// profile's login and SDK clients there (logins.ts, clients.ts).
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { BandClient, ResumeStore, TokenPair } from '@bandcollab/sdk';
import type { Command } from 'commander';
import { credentialFile, type CredentialStore } from './credentials.js';
import { unreachableServer } from './errors.js';
import { usageError } from './exit-codes.js';
import { Clients, type TokenSource } from './clients.js';
import type { Factory } from './factory.js';
import type { Io } from './io.js';
import { type Libraries, loadedLibraries, loadLibraries } from './libraries.js';
import { Logins, type SavedSignIn } from './logins.js';
import { Output } from './render.js';
import { configDirectory, originOf, type ProfileSettings, type ProfileUser, SettingsFile } from './settings.js';

/** The server band uses when no flag, variable or profile names one. */
export const DEFAULT_API_URL = 'http://localhost:3000';

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

export class Context {
  readonly io: Io;
  readonly out: Output;
  readonly profile: string;
  readonly configDir: string;
  readonly apiUrl: string;
  /** What stored credentials are bound to. */
  readonly origin: string;
  private readonly settingsFile: SettingsFile;
  private readonly logins: Logins;
  private readonly clients: Clients;

  constructor(
    readonly options: GlobalOptions,
    private readonly lib: Libraries,
    factory: Factory,
  ) {
    this.io = factory.io;
    this.out = new Output(options, this.io);
    this.profile = options.profile ?? this.io.env.BAND_PROFILE ?? 'default';
    // The name becomes part of file names (credentials, lock).
    if (!/^[\w.-]{1,64}$/.test(this.profile) || this.profile.startsWith('.')) {
      throw usageError(`profile names are letters, digits, ".", "-" and "_" (not "${this.profile}")`);
    }
    this.configDir = configDirectory(this.io);
    this.settingsFile = new SettingsFile(this.configDir);
    this.apiUrl = (options.apiUrl ?? this.io.env.BAND_API_URL ?? this.settings.apiUrl ?? DEFAULT_API_URL).replace(/\/+$/, '');
    this.origin = originOf(this.apiUrl);
    // The SDK adds /api to every path: `…/api` would ask for /api/api/… and be told "not found".
    if (/\/api$/i.test(this.apiUrl)) throw usageError(`the server address is without /api: use ${this.apiUrl.slice(0, -'/api'.length)}`);
    this.logins = new Logins(this);
    this.clients = new Clients(this, factory, this.logins);
  }

  static async of(command: Command, factory: Factory): Promise<Context> {
    return new Context(command.optsWithGlobals<GlobalOptions>(), loadedLibraries() ?? (await loadLibraries()), factory);
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

  /** Where the signed-in identity of this run comes from, once `signedIn` has been asked. */
  get source(): TokenSource | undefined {
    return this.clients.source;
  }

  /** A client that sends no credentials (register, login). */
  anonymousClient(): BandClient {
    return this.clients.anonymous();
  }

  /** A signed-in client; exit 4 with a hint when there is nobody to sign in as. */
  signedIn(): Promise<BandClient> {
    return this.clients.signedIn();
  }

  /** Stores a fresh sign-in for this profile on this server, which becomes the profile's default unless another server logged in to is. */
  saveSignIn(pair: TokenPair, user: ProfileUser): Promise<SavedSignIn> {
    return this.logins.save(pair, user);
  }

  /** Forgets this profile's login on this server (its tokens must be removed first). */
  forgetSignIn(): Promise<void> {
    return this.logins.forget();
  }

  /** The store of this profile's tokens for this server, or null when it never signed in here. */
  credentialStore(): Promise<CredentialStore | null> {
    return this.logins.store();
  }

  /** Keeps a BAND_EMAIL session open after this run (`band auth token`). */
  keepSession(): void {
    this.clients.keepSession();
  }

  /** Ends what this run started (a BAND_EMAIL session). */
  close(): Promise<void> {
    return this.clients.close();
  }
}

/** Wraps a command action: builds the context from the flags and closes it afterwards. */
export type Run = <A extends unknown[]>(work: (ctx: Context, ...args: A) => Promise<void>) => (...args: unknown[]) => Promise<void>;

/** The `run` of the command groups of one band run, on its factory. */
export function commandRunner(factory: Factory): Run {
  return <A extends unknown[]>(work: (ctx: Context, ...args: A) => Promise<void>) => async (...args: unknown[]) => {
    const ctx = await Context.of(args[args.length - 1] as Command, factory);
    try {
      await work(ctx, ...(args.slice(0, -1) as A));
    } catch (error) {
      // Only here is the address known that a request failed to reach.
      throw unreachableServer(error, ctx.apiUrl) ?? error;
    } finally {
      await ctx.close();
    }
  };
}
