import { inject, injectable } from 'tsyringe';
import type { Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

@injectable()
export class OperationsRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /** A round trip to the database; rejects when it cannot be reached. */
  async ping(): Promise<void> {
    await this.sql`select 1`;
  }
}
