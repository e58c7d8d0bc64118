import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { DomainError } from '../core/errors.js';
import { addressKey, SIGN_IN_NETWORK_DAYS } from '../core/networks.js';
import { LimitsRepository, type Reservation } from './limits-repository.js';

const rateLimited = (retryAfterSeconds: number, detail: string) =>
  new DomainError('RATE_LIMITED', detail, { retryAfterSeconds });

/**
 * The login and registration abuse limits, keyed by client address (`addressKey`: an IPv6 client by its /64).
 * Every attempt is counted before any password work and stays counted whatever its answer, also when the
 * hashing queue refused it (429, 503) or the database failed meanwhile: a flood that is refused is still a
 * flood, and must reach the limits. Over them attempts answer 429 without hashing anything.
 */
@injectable()
export class AbuseLimits {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LimitsRepository) private readonly repository: LimitsRepository,
  ) {}

  /**
   * Runs `check` (the password check) as a counted login attempt of `email` from `clientIp`. Its answer null
   * (or a thrown error) is a failure and stays counted; a user makes the attempt a counted success and ends
   * the earlier failures of this email from this address.
   */
  async login<T>(email: string, clientIp: string, check: () => Promise<T | null>): Promise<T | null> {
    const address = addressKey(clientIp);
    const reservation = await this.repository.reserveLogin(email, address, {
      failuresPerEmail: this.config.loginMaxFailures,
      failuresPerAddress: this.config.loginMaxFailuresPerAddress,
      successesPerAccount: this.config.loginMaxSuccesses,
      successesPerAddress: this.config.loginMaxSuccessesPerAddress,
      windowSeconds: this.config.loginWindowSeconds,
    });
    counted(reservation, 'Too many logins; try again later');
    const result = await check();
    if (result !== null) await this.repository.recordLoginSuccess(email, address);
    return result;
  }

  /** Runs `hash` as a counted registration from `clientIp`; counted whatever happens next. */
  async registration<T>(clientIp: string, hash: () => Promise<T>): Promise<T> {
    const reservation = await this.repository.reserveRegistration(addressKey(clientIp), {
      perAddress: this.config.registerMaxPerAddress,
      windowSeconds: this.config.registerWindowSeconds,
    });
    counted(reservation, 'Too many registrations from this address; try again later');
    return hash();
  }

  /** Whether `userId` signed in from `network` within SIGN_IN_NETWORK_DAYS: its logins take the reserved lane. */
  signedInRecentlyFrom(userId: string, network: string): Promise<boolean> {
    return this.repository.signedInRecentlyFrom(userId, network, SIGN_IN_NETWORK_DAYS);
  }

  /** Remembers that `userId` signed in from `network` now. */
  recordSignIn(userId: string, network: string): Promise<void> {
    return this.repository.recordSignIn(userId, network);
  }
}

function counted(reservation: Reservation, detail: string): void {
  if ('retryAfterSeconds' in reservation) throw rateLimited(reservation.retryAfterSeconds, detail);
}
