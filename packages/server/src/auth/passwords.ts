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
 * scrypt runs on libuv's thread pool, the one file reads and writes use, and keeps a core busy while it runs.
 * So that a flood of logins cannot starve file transfers, hashes run one fewer at a time than the machine has
 * cores (at least one), never on every pool thread (4 unless UV_THREADPOOL_SIZE says otherwise), and each slot
 * hashes at most half the time. Up to 8 per slot wait their turn (under 2 s at the default cost); past
 * that the answer is an immediate 503. One bound for the process: the pool and the cores are the process's.
 */
const THREAD_POOL_SIZE = Number(process.env.UV_THREADPOOL_SIZE) || 4;
const HASHING_CONCURRENCY = Math.max(1, Math.min(os.availableParallelism() - 1, THREAD_POOL_SIZE - 1));
const hashing = new Bounded(
  HASHING_CONCURRENCY,
  8 * HASHING_CONCURRENCY,
  () => unavailable('Too many password checks at once; try again in a second', 1),
  0.5,
);

@injectable()
export class Passwords {
  /** Verified against when the email is unknown, so both failures cost the same work. */
  private readonly decoy: Promise<Uint8Array>;

  constructor(@inject(CONFIG) private readonly config: Config) {
    this.decoy = Scrypt.kdf('decoy password', { logN: config.scryptLogN });
  }

  /**
   * Throws 503 UNAVAILABLE now when a hash could not even wait for its turn, so a flood is refused before
   * it costs any database work. `hash` and `verify` still refuse by themselves when the moment passed.
   */
  refuseWhenSaturated(): void {
    hashing.refuseWhenFull();
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
