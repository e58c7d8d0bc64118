import { inject, injectable } from 'tsyringe';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';
import { DomainError } from '../core/errors.js';
import { LimitsRepository, type Reservation } from './limits-repository.js';

const rateLimited = (retryAfterSeconds: number, detail: string) =>
  new DomainError('RATE_LIMITED', detail, { retryAfterSeconds });

/**
 * The login and registration abuse limits. Each attempt is counted before any password work, so simultaneous
 * attempts get at most the allowance; over it they answer 429 without hashing anything.
 */
@injectable()
export class AbuseLimits {
  constructor(
    @inject(CONFIG) private readonly config: Config,
    @inject(LimitsRepository) private readonly repository: LimitsRepository,
  ) {}

  /**
   * Runs `check` (the password check) as a counted login attempt of `email` from `clientIp`. Its answer null
   * is a failure and stays counted; a user makes the attempt a counted success and ends the earlier failures of
   * this email from this address; a thrown error (hashing refused, database gone) means the password was not
   * checked, so the attempt is forgotten.
   */
  async login<T>(email: string, clientIp: string, check: () => Promise<T | null>): Promise<T | null> {
    const reservation = await this.repository.reserveLogin(email, clientIp, {
      failuresPerEmail: this.config.loginMaxFailures,
      failuresPerAddress: this.config.loginMaxFailuresPerAddress,
      successesPerAccount: this.config.loginMaxSuccesses,
      successesPerAddress: this.config.loginMaxSuccessesPerAddress,
      windowSeconds: this.config.loginWindowSeconds,
    });
    const id = counted(reservation, 'Too many logins; try again later');
    let result: T | null;
    try {
      result = await check();
    } catch (error) {
      // The check's error is the answer; should the release fail too, one attempt stays counted.
      await this.repository.releaseLogin(id).catch(() => undefined);
      throw error;
    }
    if (result !== null) await this.repository.recordLoginSuccess(email, clientIp);
    return result;
  }

  /** Runs `hash` as a counted registration from `clientIp`; forgotten only when the hashing itself failed. */
  async registration<T>(clientIp: string, hash: () => Promise<T>): Promise<T> {
    const reservation = await this.repository.reserveRegistration(clientIp, {
      perAddress: this.config.registerMaxPerAddress,
      windowSeconds: this.config.registerWindowSeconds,
    });
    const id = counted(reservation, 'Too many registrations from this address; try again later');
    try {
      return await hash();
    } catch (error) {
      await this.repository.releaseRegistration(id).catch(() => undefined);
      throw error;
    }
  }
}

function counted(reservation: Reservation, detail: string): string {
  if ('retryAfterSeconds' in reservation) throw rateLimited(reservation.retryAfterSeconds, detail);
  return reservation.id;
}
