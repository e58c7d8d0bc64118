import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

/** The stored_images rows: which images are stored, how large, and whose quota they count towards. */
@injectable()
export class ImagesRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  async insert(tx: Queryable, image: { name: string; size: number; uploadedBy: string }): Promise<void> {
    await tx`insert into stored_images ${tx(image)}`;
  }

  async delete(name: string): Promise<void> {
    await this.sql`delete from stored_images where name = ${name}`;
  }
}
