import os from 'node:os';
import { inject, injectable } from 'tsyringe';
import * as scryptTypings from 'scrypt-kdf';
import { Bounded } from '../core/bounded.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { unavailable } from '../core/errors.js';

// scrypt-kdf's typings declare named exports, but the module only has a default export.
const Scrypt = (scryptTypings as unknown as { default: typeof scryptTypings }).default;

/**
 * scrypt runs on libuv's thread pool, the one file reads and writes use. Hashes run at most one per core, and
 * always leave one pool thread free (the pool has 4 unless UV_THREADPOOL_SIZE says otherwise), so a flood of
 * logins cannot starve file transfers. One bound for the process: the pool and the cores are the process's.
 */
const THREAD_POOL_SIZE = Number(process.env.UV_THREADPOOL_SIZE) || 4;
const HASHING_CONCURRENCY = Math.max(1, Math.min(os.availableParallelism(), THREAD_POOL_SIZE - 1));
const hashing = new Bounded(HASHING_CONCURRENCY, 2 * HASHING_CONCURRENCY, () =>
  unavailable('Too many password checks at once; try again in a second', 1),
);

@injectable()
export class Passwords {
  /** Verified against when the email is unknown, so both failures cost the same work. */
  private readonly decoy: Promise<Uint8Array>;

  constructor(@inject(CONFIG) private readonly config: Config) {
    this.decoy = Scrypt.kdf('decoy password', { logN: config.scryptLogN });
  }

  /** Past the hashing bound this throws 503 UNAVAILABLE with Retry-After: 1, as `verify` does. */
  async hash(password: string): Promise<string> {
    const key = await hashing.run(() => Scrypt.kdf(password, { logN: this.config.scryptLogN }));
    return Buffer.from(key).toString('base64');
  }

  /** `storedHash` null (unknown email, or an account without a password) still does the work, then fails. */
  async verify(storedHash: string | null, password: string): Promise<boolean> {
    if (storedHash === null) {
      const decoy = await this.decoy;
      await hashing.run(() => Scrypt.verify(decoy, password));
      return false;
    }
    return hashing.run(() => Scrypt.verify(Buffer.from(storedHash, 'base64'), password));
  }
}
