import { extensionsOf, FILE_TYPES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { Principal } from '../core/auth-guard.js';
import type { Sql } from '../core/database.js';
import { BLOB_STORE, SQL } from '../core/di.js';
import { StoredObjects } from '../core/stored-objects.js';
import { type BlobStore, ObjectMissing, sha256Of, storeKeys } from '../core/store/index.js';
import { notFound } from '../core/errors.js';
import { PendingObjects } from '../core/pending-objects.js';
import type { ReceivedFile } from '../core/multipart.js';
import { UploadLimits } from '../core/upload-limits.js';
import type { StoredBytes } from '../core/transfer.js';
import { ImagesRepository, type StoredImage } from './repository.js';

/** The names this server gives images; anything else names no image. */
export const IMAGE_NAME = new RegExp(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\.(${extensionsOf('IMAGE').join('|')})$`);

/** Project covers, vibe images and avatars, stored under keys images/<name> (received by ImageForms). */
@injectable()
export class Images {
  constructor(
    @inject(StoredObjects) private readonly objects: StoredObjects,
    @inject(BLOB_STORE) private readonly blobs: BlobStore,
    @inject(UploadLimits) private readonly limits: UploadLimits,
    @inject(ImagesRepository) private readonly repository: ImagesRepository,
    @inject(SQL) private readonly sql: Sql,
    @inject(PendingObjects) private readonly pending: PendingObjects,
  ) {}

  /**
   * Records a received image (its size and uploader, within the quota), stored already under its new name;
   * its sha256 was computed while it was received. The project or vibe that takes it is written
   * afterwards; a crash in between leaves a stored_images row that the purge job drops a day later, and bytes
   * that the `orphans` command then finds.
   */
  async store(principal: Principal, file: ReceivedFile): Promise<StoredImage> {
    const name = `${file.id}.${file.rule.extension}`;
    try {
      await this.sql.begin(async (tx) => {
        await this.limits.checkQuotaInTransaction(tx, principal.userId, file.size);
        await this.repository.insert(tx, { name, size: file.size, uploadedBy: principal.userId });
        await this.pending.settle(tx, file.key);
      });
    } catch (error) {
      await this.pending.discard(file.key);
      throw error;
    }
    return { name, sha256: file.sha256 };
  }

  /** Runs `work`, which records a newly stored image; when it fails, the image is removed again. */
  async keepIfRecorded<T>(image: StoredImage | null, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (image !== null) await this.remove(image.name);
      throw error;
    }
  }

  /** Removes an image no project or vibe holds (any more), and its stored_images row if still there. */
  async remove(image: string): Promise<void> {
    await this.repository.delete(image);
    await this.objects.removeQuietly(storeKeys.image(image));
  }

  /** What a response needs to send a stored image; its ETag is the quoted sha256, as for files. 404 when its bytes are gone. */
  async stored({ name, sha256 }: StoredImage): Promise<StoredBytes> {
    const key = storeKeys.image(name);
    const info = await this.blobs.head(key);
    if (!info) throw notFound('Image');
    const extension = name.slice(name.lastIndexOf('.') + 1);
    return { key, read: (range) => this.blobs.read(key, range), openReader: (range) => this.blobs.openReader(key, range), size: info.size, mimeType: FILE_TYPES[extension]!.mimeType, etag: `"${sha256}"`, modifiedAt: info.modifiedAt, downloadName: name };
  }

  /** Hashes a stored image's bytes: for images stored before their sha256 was recorded. 404 when they are gone. */
  async hash(name: string): Promise<string> {
    try {
      return await sha256Of(this.blobs, storeKeys.image(name));
    } catch (error) {
      if (error instanceof ObjectMissing) throw notFound('Image');
      throw error;
    }
  }
}
