import os from 'node:os';
import { inject, injectable } from 'tsyringe';
import * as scryptTypings from 'scrypt-kdf';
import { Bounded } from '../core/bounded.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { DomainError, unavailable } from '../core/errors.js';

// scrypt-kdf's typings declare named exports, but the module only has a default export.
const Scrypt = (scryptTypings as unknown as { default: typeof scryptTypings }).default;

/**
 * scrypt runs on libuv's thread pool, the one file reads and writes use, and keeps a core busy while it runs.
 * So that a flood of logins cannot starve file transfers, hashes run one fewer at a time than the machine has
 * cores (at least one), never on every pool thread (4 unless UV_THREADPOOL_SIZE says otherwise), and each slot
 * hashes at most half the time. The queue is shared fairly between client addresses: each holds at most one
 * running hash and one waiting, and a third from the same address is an immediate 429 for that address alone,
 * so one client (even with valid credentials) cannot take everyone's turn. Up to 64 per slot wait, so 50 people
 * logging in from 50 addresses at once are all served (bench/logins.bench.mjs); past that the answer is an
 * immediate 503. A waiting login moves no byte: IDLE_TIMEOUT_SECONDS is also the longest it may wait. One bound
 * for the process: the pool and the cores are the process's. Login, registration and password change share it.
 */
const THREAD_POOL_SIZE = Number(process.env.UV_THREADPOOL_SIZE) || 4;
const HASHING_CONCURRENCY = Math.max(1, Math.min(os.availableParallelism() - 1, THREAD_POOL_SIZE - 1));
const HASHES_PER_ADDRESS = 2;
const hashing = new Bounded(HASHING_CONCURRENCY, 64 * HASHING_CONCURRENCY, HASHES_PER_ADDRESS, {
  keyFull: () => new DomainError('RATE_LIMITED', 'A password check from this address is already waiting; try again in a second', { retryAfterSeconds: 1 }),
  full: () => unavailable('Too many password checks at once; try again in a second', 1),
}, 0.5);

@injectable()
export class Passwords {
  /** Verified against when the email is unknown, so both failures cost the same work. */
  private readonly decoy: Promise<Uint8Array>;

  constructor(@inject(CONFIG) private readonly config: Config) {
    this.decoy = Scrypt.kdf('decoy password', { logN: config.scryptLogN });
  }

  /**
   * Throws now when a hash for `clientIp` could not even wait for its turn (429 RATE_LIMITED when that address
   * already holds its share, else 503 UNAVAILABLE), so a flood is refused before it costs any database work.
   * `hash` and `verify` still refuse by themselves when the moment passed.
   */
  refuseWhenSaturated(clientIp: string): void {
    hashing.refuseWhenFull(clientIp);
  }

  /** Past the hashing bounds this throws as `refuseWhenSaturated` does, with Retry-After: 1. */
  async hash(password: string, clientIp: string): Promise<string> {
    const key = await hashing.run(clientIp, () => Scrypt.kdf(password, { logN: this.config.scryptLogN }));
    return Buffer.from(key).toString('base64');
  }

  /** `storedHash` null (unknown email, or an account without a password) still does the work, then fails. */
  async verify(storedHash: string | null, password: string, clientIp: string): Promise<boolean> {
    if (storedHash === null) {
      const decoy = await this.decoy;
      await hashing.run(clientIp, () => Scrypt.verify(decoy, password));
      return false;
    }
    return hashing.run(clientIp, () => Scrypt.verify(Buffer.from(storedHash, 'base64'), password));
  }
}
