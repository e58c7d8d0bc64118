import { inject, injectable } from 'tsyringe';
import * as scryptTypings from 'scrypt-kdf';
import type { Config } from '../core/config.js';
import { CONFIG } from '../core/di.js';

// scrypt-kdf's typings declare named exports, but the module only has a default export.
const Scrypt = (scryptTypings as unknown as { default: typeof scryptTypings }).default;

@injectable()
export class Passwords {
  /** Verified against when the email is unknown, so both failures cost the same work. */
  private readonly decoy: Promise<Uint8Array>;

  constructor(@inject(CONFIG) private readonly config: Config) {
    this.decoy = Scrypt.kdf('decoy password', { logN: config.scryptLogN });
  }

  async hash(password: string): Promise<string> {
    const key = await Scrypt.kdf(password, { logN: this.config.scryptLogN });
    return Buffer.from(key).toString('base64');
  }

  /** `storedHash` null (unknown email, or an account without a password) still does the work, then fails. */
  async verify(storedHash: string | null, password: string): Promise<boolean> {
    if (storedHash === null) {
      await Scrypt.verify(await this.decoy, password);
      return false;
    }
    return Scrypt.verify(Buffer.from(storedHash, 'base64'), password);
  }
}
