import os from 'node:os';
import { inject, injectable } from 'tsyringe';
import * as scryptTypings from 'scrypt-kdf';
import { Bounded, type Lane } from '../core/bounded.js';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { DomainError, unavailable } from '../core/errors.js';

// scrypt-kdf's typings declare named exports, but the module only has a default export.
const Scrypt = (scryptTypings as unknown as { default: typeof scryptTypings }).default;

/**
 * scrypt runs on libuv's thread pool, the one file reads and writes use, and keeps a core busy while it runs.
 * So that a flood of logins cannot starve file transfers, hashes run one fewer at a time than the machine has
 * cores (at least one), never on every pool thread (4 unless UV_THREADPOOL_SIZE says otherwise), and each slot
 * hashes at most half the time. The queue is shared fairly between client networks (core/networks.ts: /24 for
 * IPv4, /64 for IPv6, so a few dozen neighbouring addresses count as one asker): each holds at most one running
 * hash and one waiting, and a third from the same network is an immediate 429 for that network alone. Up to 64
 * per slot wait in the open lane, so 50 people logging in from 50 networks at once are all served
 * (bench/logins.bench.mjs); past that the answer is an immediate 503. The reserved lane (16 per slot; freed slots go to the two lanes in turn, it
 * first) is for password checks someone already vouched for: a signed-in caller, a login presenting a live
 * refresh token of the account, or one from a network the account signed in from within 30 days; its share
 * is per account. A waiting check moves no byte: IDLE_TIMEOUT_SECONDS is also the longest it may wait. One
 * bound for the process: the pool and the cores are the process's. Login, registration and password change
 * share it.
 */
const THREAD_POOL_SIZE = Number(process.env.UV_THREADPOOL_SIZE) || 4;
const HASHING_CONCURRENCY = Math.max(1, Math.min(os.availableParallelism() - 1, THREAD_POOL_SIZE - 1));
const HASHES_PER_ASKER = 2;
const hashing = new Bounded(HASHING_CONCURRENCY, 64 * HASHING_CONCURRENCY, HASHES_PER_ASKER, {
  keyFull: () => new DomainError('RATE_LIMITED', 'A password check from this network is already waiting; try again in a second', { retryAfterSeconds: 1 }),
  full: () => unavailable('Too many password checks at once; try again in a second', 1),
}, 0.5, 16 * HASHING_CONCURRENCY);

/** Whose turn a password check takes: the open lane keyed by the client's network, or the reserved lane by account. */
export type Asker = { network: string } | { account: string };

const laneOf = (asker: Asker): { key: string; lane: Lane } =>
  'network' in asker ? { key: `network ${asker.network}`, lane: 'open' } : { key: `account ${asker.account}`, lane: 'reserved' };

/** How much a new measurement of a check's time moves the estimate the cheap answers wait for. */
const SMOOTHING = 0.3;

@injectable()
export class Passwords {
  /**
   * How long a password check in the open lane takes from admission to answer (queue wait included), smoothed;
   * first measured by hashing once at start. What `answerWithoutHash` waits.
   */
  private typicalCheckMs = 0;
  private readonly calibrated: Promise<void>;

  constructor(@inject(CONFIG) private readonly config: Config) {
    this.calibrated = calibrate(config.scryptLogN).then((ms) => {
      this.typicalCheckMs ||= ms;
    });
  }

  /**
   * Throws now when a check for `asker` could not even wait for its turn (429 RATE_LIMITED when it already
   * holds its share, else 503 UNAVAILABLE). `hash` and `verify` still refuse by themselves when the moment passed.
   */
  refuseWhenSaturated(asker: Asker): void {
    const { key, lane } = laneOf(asker);
    hashing.refuseWhenFull(key, lane);
  }

  /** Past the hashing bounds this throws as `refuseWhenSaturated` does, with Retry-After: 1. */
  async hash(password: string, asker: Asker): Promise<string> {
    const { key, lane } = laneOf(asker);
    const derived = await hashing.run(key, () => Scrypt.kdf(password, { logN: this.config.scryptLogN }), lane);
    return Buffer.from(derived).toString('base64');
  }

  async verify(storedHash: string, password: string, asker: Asker): Promise<boolean> {
    const { key, lane } = laneOf(asker);
    const started = performance.now();
    const matches = await hashing.run(key, () => Scrypt.verify(Buffer.from(storedHash, 'base64'), password), lane);
    if (lane === 'open') this.typicalCheckMs += (performance.now() - started - this.typicalCheckMs) * SMOOTHING;
    return matches;
  }

  /**
   * The answer to a check that has no hash to compare with (an unknown email, an account without a password),
   * from the cheap path: admitted and refused exactly as an open-lane check of `network` (its share held
   * meanwhile, so three at once from one network are refused alike), it waits as long as such checks take now,
   * queue included, but takes no slot and hashes nothing. So a flood of unknown emails costs timers, and the
   * answer's time and refusals still do not tell an unknown email from a wrong password.
   */
  async answerWithoutHash(network: string): Promise<false> {
    await this.calibrated;
    await hashing.occupy(`network ${network}`, () => new Promise((resolve) => setTimeout(resolve, this.typicalCheckMs)));
    return false;
  }
}

/** How long one hash at `logN` takes here: the faster of two, since the first also pays for warming up. */
async function calibrate(logN: number): Promise<number> {
  let fastest = Infinity;
  for (let i = 0; i < 2; i++) {
    const started = performance.now();
    await Scrypt.kdf('calibration password', { logN });
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}
