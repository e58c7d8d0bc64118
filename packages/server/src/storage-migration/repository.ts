import { inject, injectable } from 'tsyringe';
import type { Sql } from '../core/database.js';
import { SQL } from '../core/di.js';
import { storeKeys } from '../core/store/index.js';

/** A stored object the database refers to, with what its bytes must hash to. */
export interface RecordedObject {
  key: string;
  /** Null for an image whose sha256 was never recorded (images stored before migration 010): the local bytes' own hash is the truth. */
  sha256: string | null;
}

/** A row of recordedObjects' statement: a file, a preview (a STEM entry's has a position) or an image. */
interface RecordedRow {
  name: string;
  kind: 'file' | 'preview' | 'image';
  extension: string | null;
  position: number | null;
}

function keyOf(row: RecordedRow): string {
  if (row.kind === 'file') return storeKeys.file(row.name, row.extension!);
  if (row.kind === 'image') return storeKeys.image(row.name);
  return row.position === null ? storeKeys.preview(row.name) : storeKeys.entryPreview(row.name, row.position);
}

@injectable()
export class StorageMigrationRepository {
  constructor(@inject(SQL) private readonly sql: Sql) {}

  /**
   * Every stored object rows refer to, files (every version) and their previews once made (a STEM entry's too),
   * and images and avatars, read in one statement. A preview's sha256 is not recorded (it is made again from its file): its
   * local bytes' own hash is the truth, checked against the bucket's copy like any other.
   */
  async recordedObjects(): Promise<RecordedObject[]> {
    const rows = await this.sql<(RecordedRow & { sha256: string | null })[]>`
      select id::text as name, 'file' as kind, extension, null::int as position, sha256 from files
      union all
      select id::text, 'preview', null, null, null from files where preview = 'done'
      union all
      select file_id::text, 'preview', null, position, null from stem_entries where preview = 'done'
      union all
      select image, 'image', null, null, image_sha256 from projects where image is not null
      union all
      select image, 'image', null, null, image_sha256 from vibes where image is not null
      union all
      select avatar, 'image', null, null, avatar_sha256 from users where avatar is not null
      order by 2, 5 nulls last, 1, 4`;
    const objects = new Map<string, RecordedObject>();
    for (const row of rows) {
      const key = keyOf(row);
      if (!objects.get(key)?.sha256) objects.set(key, { key, sha256: row.sha256 });
    }
    return [...objects.values()];
  }
}
