import { MAX_UPLOAD_BYTES, describeSize } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import type { z } from 'zod';
import type { Principal } from '../core/auth-guard.js';
import { invalidField } from '../core/errors.js';
import { isMultipart, jsonBody, type Request, type Response } from '../core/http.js';
import { Multipart, type ReceivedUpload } from '../core/multipart.js';
import { UploadLimits } from '../core/upload-limits.js';
import type { StoredImage } from './repository.js';
import { Images } from './service.js';

/** The create and update bodies of projects and vibes, which may carry an image: HTTP only, for their routes. */
@injectable()
export class ImageForms {
  constructor(
    @inject(Multipart) private readonly multipart: Multipart,
    @inject(Images) private readonly images: Images,
    @inject(UploadLimits) private readonly limits: UploadLimits,
  ) {}

  /**
   * Reads JSON, or a multipart form whose optional `image` part must be an image (≤ 5 MiB, checked by its
   * leading bytes). Once the fields are valid the image is stored at once under a new name, counted towards
   * the principal's quota; the service that takes it removes it again if it fails.
   */
  async read<S extends z.ZodType>(principal: Principal, req: Request, res: Response, schema: S): Promise<{ input: z.infer<S>; image: StoredImage | null }> {
    if (!isMultipart(req)) return { input: await jsonBody(req, res, schema), image: null };
    const upload = await this.receive(principal, req, res);
    const input = await this.multipart.validFields(upload, schema);
    const image = upload.file ? await this.images.store(principal, upload.file) : null;
    return { input, image };
  }

  /** A multipart form whose `image` part is required (an avatar), checked and stored as `read` does. */
  async readImage(principal: Principal, req: Request, res: Response): Promise<StoredImage> {
    const upload = await this.receive(principal, req, res);
    if (!upload.file) throw invalidField('image', `is required: a JPEG, PNG, GIF or WebP image of at most ${describeSize(MAX_UPLOAD_BYTES.IMAGE)}`);
    return this.images.store(principal, upload.file);
  }

  private receive(principal: Principal, req: Request, res: Response): Promise<ReceivedUpload> {
    return this.multipart.receive(req, res, { fileField: 'image', storedAs: 'image', admission: this.limits.images(principal.userId) });
  }
}
