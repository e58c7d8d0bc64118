import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { FILE_TYPES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { z } from 'zod';
import { Disk } from '../core/disk.js';
import { notFound } from '../core/errors.js';
import { isMultipart, jsonBody, type Request, type Response, validate } from '../core/http.js';
import { Multipart, type ReceivedFile } from '../core/multipart.js';
import type { StoredBytes } from '../core/transfer.js';

/** Where a stored image (project cover or vibe image) is served; the column holds `<uuid>.<ext>`. */
export const imageUrl = (image: string | null): string | null => (image === null ? null : `/uploads/images/${image}`);

/** The names this server gives images; anything else names no image. */
export const IMAGE_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.(jpg|jpeg|png|gif|webp)$/;

/** Project covers and vibe images: received from multipart forms, stored under DATA_DIR/images. */
@injectable()
export class Images {
  constructor(
    @inject(Disk) private readonly disk: Disk,
    @inject(Multipart) private readonly multipart: Multipart,
  ) {}

  /**
   * Reads a create or update body: JSON, or a multipart form whose optional `image` part must be an image
   * (≤ 5 MiB, checked by its leading bytes) and is stored at once under a new name. Invalid fields remove it again.
   */
  async readBody<S extends z.ZodType>(req: Request, res: Response, schema: S): Promise<{ input: z.infer<S>; image: string | null }> {
    if (!isMultipart(req)) return { input: await jsonBody(req, res, schema), image: null };
    const { fields, file } = await this.multipart.receive(req, res, { fileField: 'image', types: ['IMAGE'], typeUnnamedByContent: true });
    const image = file ? await this.store(file) : null;
    const input = await this.keepIfRecorded(image, async () => validate(schema, fields));
    return { input, image };
  }

  /** Moves a received image into place under a new name, which it answers. */
  private async store(file: ReceivedFile): Promise<string> {
    const image = `${randomUUID()}.${file.rule.extension}`;
    try {
      await this.disk.moveIntoPlace(file.tempPath, this.disk.imagePath(image));
    } catch (error) {
      await this.disk.removeQuietly(file.tempPath);
      throw error;
    }
    return image;
  }

  /** Runs `work`, which records a newly stored image; when it fails, the image is removed again. */
  async keepIfRecorded<T>(image: string | null, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (image !== null) await this.remove(image);
      throw error;
    }
  }

  async remove(image: string): Promise<void> {
    await this.disk.removeQuietly(this.disk.imagePath(image));
  }

  /** What a response needs to send a stored image; 404 when its bytes are gone. */
  async stored(image: string): Promise<StoredBytes> {
    const path = this.disk.imagePath(image);
    const info = await stat(path).catch(() => null);
    // The ETag is the quoted sha256, as for files (API.md §6); an image is at most 5 MiB, so it is hashed here.
    const sha256 = info && (await sha256Of(path).catch(() => null));
    if (!info || !sha256) throw notFound('Image');
    const extension = image.slice(image.lastIndexOf('.') + 1);
    return { path, size: info.size, mimeType: FILE_TYPES[extension]!.mimeType, etag: `"${sha256}"`, modifiedAt: info.mtime, downloadName: image };
  }
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
