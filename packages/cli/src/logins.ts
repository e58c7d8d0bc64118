// A profile's login on the server this run talks to: the credential store holding its tokens (chosen at
// sign-in: the OS keychain, else a 0600 file), saving and forgetting it, and the stored pair as the SDK's
// token store.
import path from 'node:path';
import type { TokenPair, TokenStore } from '@bandcollab/sdk';
import {
  credentialFile,
  type CredentialStore,
  FileStore,
  openKeychain,
  type StoreKind,
  type StoredTokens,
  withProfileLock,
} from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import type { Io } from './io.js';
import { adoptLegacyLogin, type ProfileSettingsAccess } from './legacy-login.js';
import type { Output } from './render.js';
import { originOf, type ProfileUser } from './settings.js';

/** What a login depends on (of the run's Context): which profile, which server, the settings and the machine. */
interface LoginScope extends ProfileSettingsAccess {
  readonly options: { readonly insecureStorage: boolean };
  readonly io: Io;
  readonly out: Output;
  readonly profile: string;
  readonly configDir: string;
  readonly apiUrl: string;
  readonly origin: string;
}

/** Where a sign-in was stored, and the default server it left in place when that is another one. */
export interface SavedSignIn {
  store: CredentialStore;
  keptDefault: string | undefined;
}

export class Logins {
  constructor(private readonly ctx: LoginScope) {}

  /**
   * Stores a fresh sign-in (login, register, web login) for this profile on this server; logins on other
   * servers stay. This server becomes the profile's default unless the default is another server logged in
   * to: that one stays (`band auth use` switches), and the answer names it for the command to tell the user.
   */
  async save(pair: TokenPair, user: ProfileUser): Promise<SavedSignIn> {
    // The pair of an earlier login here goes, wherever it was (a keychain that is gone now is no reason to fail).
    const previous = await this.store().catch(() => null);
    await previous?.remove().catch(() => undefined);
    const { store, keychainFallback } = await this.chooseStore();
    await store.write(toStored(pair, this.ctx.io.now()));
    const { apiUrl, logins } = this.ctx.settings;
    const keptDefault = apiUrl !== undefined && originOf(apiUrl) !== this.ctx.origin && logins?.[originOf(apiUrl)] !== undefined ? apiUrl : undefined;
    await this.ctx.saveSettings({
      ...this.ctx.settings,
      apiUrl: keptDefault ?? this.ctx.apiUrl,
      logins: { ...logins, [this.ctx.origin]: { credentialStore: store.kind, user } },
      keychainFallback,
    });
    return { store, keptDefault };
  }

  /** Forgets this profile's login on this server (its tokens must be removed first). */
  async forget(): Promise<void> {
    const logins = { ...this.ctx.settings.logins };
    delete logins[this.ctx.origin];
    await this.ctx.saveSettings({ ...this.ctx.settings, logins });
  }

  /** The store of this profile's tokens for this server, or null when it never signed in here. */
  async store(): Promise<CredentialStore | null> {
    await adoptLegacyLogin(this.ctx, path.join(this.ctx.configDir, 'credentials', `${this.ctx.profile}.json`), (kind, origin) => this.openStore(kind, origin));
    const kind = this.ctx.settings.logins?.[this.ctx.origin]?.credentialStore;
    return kind ? this.openStore(kind, this.ctx.origin) : null;
  }

  /** The stored pair as the SDK's token store: every band process of this profile refreshes it under one lock. */
  tokenStore(store: CredentialStore): TokenStore {
    const lockPath = path.join(this.ctx.configDir, `${this.ctx.profile}.refresh.lock`);
    return {
      load: async () => (await store.read()) ?? undefined,
      save: (pair) => store.write(toStored(pair, this.ctx.io.now())),
      withRefreshLock: (refresh) => withProfileLock(lockPath, refresh),
    };
  }

  private async openStore(kind: StoreKind, origin: string): Promise<CredentialStore> {
    if (kind === 'file') return new FileStore(credentialFile(this.ctx.configDir, this.ctx.profile, origin));
    const keychain = await openKeychain(this.ctx.profile, origin, this.ctx.io.loadKeychain);
    if ('unavailable' in keychain) throw new CliError(`the OS keychain holding your credentials is unavailable: ${keychain.unavailable}`, EXIT.auth);
    return keychain;
  }

  /**
   * The OS keychain, else a 0600 file. Falling back is said once, in one line: a machine without a keychain
   * (a server, CI, a container) would otherwise print the same D-Bus error at every login. `keychainFallback`
   * is the reason said, kept in the settings; a new reason is said again.
   */
  private async chooseStore(): Promise<{ store: CredentialStore; keychainFallback?: string }> {
    const file = new FileStore(credentialFile(this.ctx.configDir, this.ctx.profile, this.ctx.origin));
    if (this.ctx.options.insecureStorage) {
      this.ctx.out.notice(`storing credentials in ${file.location} (--insecure-storage)`);
      return { store: file, keychainFallback: this.ctx.settings.keychainFallback };
    }
    const keychain = await openKeychain(this.ctx.profile, this.ctx.origin, this.ctx.io.loadKeychain);
    if (!('unavailable' in keychain)) return { store: keychain };
    const reason = oneLine(keychain.unavailable);
    if (reason !== this.ctx.settings.keychainFallback) {
      this.ctx.out.notice(`no OS keychain (${reason}); storing credentials in ${file.location} (mode 0600); band says this once`);
    }
    return { store: file, keychainFallback: reason };
  }
}

/** The first line of an error, at most 200 characters: D-Bus errors run over several lines. */
function oneLine(message: string): string {
  const first = message.split('\n', 1)[0]!.trim();
  return first.length > 200 ? `${first.slice(0, 199)}…` : first;
}

function toStored(pair: TokenPair, now: number): StoredTokens {
  return { accessToken: pair.accessToken, refreshToken: pair.refreshToken, accessTokenExpiresAt: now + pair.expiresIn * 1000 };
}
