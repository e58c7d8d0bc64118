// Where a profile's tokens live: the OS keychain through keytar when it works, else a 0600 file in a 0700
// directory. There is one pair per profile and server origin, so a token only ever goes back to the server
// that issued it. Refreshing is serialised across band processes (lock, re-read, compare): the server
// revokes a whole session when an already-rotated refresh token is presented, so two processes must never
// both rotate the same one.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keytar } from './io.js';

export interface StoredTokens {
  accessToken: string;
  refreshToken: string;
  /** Milliseconds since the epoch. */
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
/** keytar blocks for a long time when a keychain daemon hangs: give up after this (gh does the same). */
const KEYCHAIN_TIMEOUT_MS = 3000;
const LOCK_WAIT_MS = 20_000;
/** A lock file older than this belongs to a process that died while holding it. */
const LOCK_STALE_MS = 30_000;

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
    private readonly keytar: Keytar,
    private readonly account: string,
  ) {}

  async read(): Promise<StoredTokens | null> {
    const value = await withTimeout(this.keytar.getPassword(KEYCHAIN_SERVICE, this.account));
    return value === null ? null : parseTokens(value);
  }

  async write(tokens: StoredTokens): Promise<void> {
    await withTimeout(this.keytar.setPassword(KEYCHAIN_SERVICE, this.account, JSON.stringify(tokens)));
  }

  async remove(): Promise<void> {
    await withTimeout(this.keytar.deletePassword(KEYCHAIN_SERVICE, this.account));
  }
}

/**
 * The keychain store of a profile's login on one server (account `<profile>@<origin>`) when keytar loads and
 * answers within the timeout; else why not.
 */
export async function openKeychain(profile: string, origin: string, loadKeytar: () => Promise<Keytar>): Promise<KeychainStore | { unavailable: string }> {
  let keytar: Keytar;
  try {
    keytar = await loadKeytar();
  } catch {
    return { unavailable: 'keytar is not installed or could not load' };
  }
  const store = new KeychainStore(keytar, `${profile}@${origin}`);
  try {
    await store.read();
    return store;
  } catch (error) {
    return { unavailable: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Runs `refresh` with the profile's lock held, after re-reading the store: when another process already
 * rotated the pair we were given and its access token is still good, that pair is used instead.
 */
export async function refreshLocked(
  store: CredentialStore,
  lockPath: string,
  current: StoredTokens,
  refresh: (refreshToken: string) => Promise<StoredTokens>,
  isFresh: (tokens: StoredTokens) => boolean,
): Promise<StoredTokens | null> {
  return withLock(lockPath, async () => {
    const latest = await store.read();
    if (latest === null) return null;
    if (latest.refreshToken !== current.refreshToken && isFresh(latest)) return latest;
    const next = await refresh(latest.refreshToken);
    await store.write(next);
    return next;
  });
}

async function withLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  await mkdir(path.dirname(lockPath), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await isStale(lockPath)) await rm(lockPath, { force: true });
      else if (Date.now() > deadline) throw new Error(`another band process holds ${lockPath}; remove it if none is running`);
      else await sleep(25 + Math.random() * 50);
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockPath, { force: true });
  }
}

async function isStale(lockPath: string): Promise<boolean> {
  try {
    return Date.now() - (await stat(lockPath)).mtimeMs > LOCK_STALE_MS;
  } catch {
    return false;
  }
}

function parseTokens(text: string): StoredTokens | null {
  const value = JSON.parse(text) as Partial<StoredTokens>;
  if (typeof value.accessToken !== 'string' || typeof value.refreshToken !== 'string') return null;
  return { accessToken: value.accessToken, refreshToken: value.refreshToken, accessTokenExpiresAt: Number(value.accessTokenExpiresAt) || 0 };
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the OS keychain did not answer within ${KEYCHAIN_TIMEOUT_MS / 1000} s`)), KEYCHAIN_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
