import { inject, injectable } from 'tsyringe';
import type { Queryable, Sql } from '../core/database.js';
import { SQL } from '../core/di.js';

/** Where a stored image (project cover or vibe image) is served; the column holds `<uuid>.<ext>`. */
export const imageUrl = (image: string | null): string | null => (image === null ? null : `/uploads/images/${image}`);

/** Where an account's avatar is served (to any signed-in user); the column holds `<uuid>.<ext>`. */
export const avatarUrl = (avatar: string | null): string | null => (avatar === null ? null : `/uploads/avatars/${avatar}`);

/** An image stored under DATA_DIR/images: its name (`<uuid>.<ext>`) and the sha256 of its bytes, its ETag. */
export interface StoredImage {
  name: string;
  sha256: string;
}

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
