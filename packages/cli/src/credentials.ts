// Where a profile's tokens live: the OS keychain (@napi-rs/keyring) when it works, else a 0600 file in a 0700
// directory. There is one pair per profile and server origin, so a token only ever goes back to the server
// that issued it. The SDK refreshes a stored pair under the profile's lock (withProfileLock): the server
// revokes a whole session when an already-rotated refresh token is presented, so two processes must never
// both rotate the same one.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Keychain } from './keychain.js';

export interface StoredTokens {
  accessToken: string;
  refreshToken: string;
  /** Milliseconds since the epoch; the SDK reads the expiry from the token itself, older bands read this. */
  accessTokenExpiresAt: number;
}

export type StoreKind = 'keychain' | 'file';

export interface CredentialStore {
  readonly kind: StoreKind;
  /** Where the tokens are, for people ("the OS keychain", a file path). */
  readonly location: string;
  read(): Promise<StoredTokens | null>;
  write(tokens: StoredTokens): Promise<void>;
  remove(): Promise<void>;
}

const KEYCHAIN_SERVICE = 'bandcollab';
const LOCK_WAIT_MS = 20_000;
const LOCK_POLL_MS = 100;
/** A lock its holder has not touched for this long belongs to a process that died holding it. */
const LOCK_STALE_MS = 10_000;

/**
 * The file of a profile's login on one server: `<profile>@<origin>.json`, the origin percent-encoded (every
 * character but letters, digits, "." and "-"), so the name is valid everywhere and no two origins share one.
 */
export function credentialFile(configDir: string, profile: string, origin: string): string {
  const encoded = origin.replace(/[^A-Za-z0-9.-]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return path.join(configDir, 'credentials', `${profile}@${encoded}.json`);
}

export class FileStore implements CredentialStore {
  readonly kind = 'file';

  constructor(readonly location: string) {}

  async read(): Promise<StoredTokens | null> {
    try {
      return parseTokens(await readFile(this.location, 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async write(tokens: StoredTokens): Promise<void> {
    await mkdir(path.dirname(this.location), { recursive: true, mode: 0o700 });
    // Write then rename: a concurrent reader sees the old or the new file, never half of one.
    const temporary = `${this.location}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temporary, JSON.stringify(tokens), { mode: 0o600 });
    await rename(temporary, this.location);
  }

  async remove(): Promise<void> {
    await rm(this.location, { force: true });
  }
}

class KeychainStore implements CredentialStore {
  readonly kind = 'keychain';
  readonly location = 'the OS keychain';

  constructor(
    private readonly keychain: Keychain,
    private readonly account: string,
  ) {}

  async read(): Promise<StoredTokens | null> {
    const value = await this.keychain.getPassword(KEYCHAIN_SERVICE, this.account);
    return value === null ? null : parseTokens(value);
  }

  async write(tokens: StoredTokens): Promise<void> {
    await this.keychain.setPassword(KEYCHAIN_SERVICE, this.account, JSON.stringify(tokens));
  }

  async remove(): Promise<void> {
    await this.keychain.deletePassword(KEYCHAIN_SERVICE, this.account);
  }
}

/**
 * The keychain store of a profile's login on one server (account `<profile>@<origin>`) when the keychain module
 * loads and the keychain answers; else why not.
 */
export async function openKeychain(profile: string, origin: string, loadKeychain: () => Promise<Keychain>): Promise<KeychainStore | { unavailable: string }> {
  let keychain: Keychain;
  try {
    keychain = await loadKeychain();
  } catch {
    return { unavailable: 'the keychain module @napi-rs/keyring is not installed or has no binary for this platform' };
  }
  const store = new KeychainStore(keychain, `${profile}@${origin}`);
  try {
    await store.read();
    return store;
  } catch (error) {
    return { unavailable: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Runs `work` while no other band process of this profile runs it (proper-lockfile: a lock directory whose
 * holder keeps touching it). A holder that crashed or was killed stops touching it, and after LOCK_STALE_MS
 * the lock is taken over.
 */
export async function withProfileLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  await mkdir(path.dirname(lockPath), { recursive: true, mode: 0o700 });
  // Loaded only when a refresh is due: proper-lockfile brings graceful-fs, which patches fs as it loads.
  const { default: lockfile } = await import('proper-lockfile');
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(lockPath, {
      lockfilePath: lockPath,
      realpath: false,
      stale: LOCK_STALE_MS,
      retries: { retries: Math.ceil(LOCK_WAIT_MS / LOCK_POLL_MS), factor: 1, minTimeout: LOCK_POLL_MS / 2, maxTimeout: LOCK_POLL_MS, randomize: true },
      // Only a holder paused for longer than the stale time loses its lock: the store is re-read under the
      // lock, so its work still ends in a stored pair; failing the command for it would help nobody.
      onCompromised: () => undefined,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    throw new Error(`another band process holds ${lockPath}; remove it if none is running`);
  }
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
}

function parseTokens(text: string): StoredTokens | null {
  const value = JSON.parse(text) as Partial<StoredTokens>;
  if (typeof value.accessToken !== 'string' || typeof value.refreshToken !== 'string') return null;
  return { accessToken: value.accessToken, refreshToken: value.refreshToken, accessTokenExpiresAt: Number(value.accessTokenExpiresAt) || 0 };
}
