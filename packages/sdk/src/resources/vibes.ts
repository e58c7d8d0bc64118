import { BandPromise } from '../band-promise.js';
import { imageFormOrJson } from '../multipart.js';
import type { FileInput } from '../upload-source.js';
import { ROUTES } from '../contract/routes.js';
import { type RequestOptions, type Transport } from '../transport.js';
import type {
  CreateVibeRequest,
  Deleted,
  ReorderVibesRequest,
  ReorderVibesResult,
  UpdateVibeRequest,
  Vibe,
  VibeWithCuts,
} from '../types.js';

/** The JSON request, or multipart when an image comes along. */
export interface CreateVibeInput extends CreateVibeRequest {
  image?: FileInput;
}

export interface UpdateVibeInput extends Omit<UpdateVibeRequest, 'image'> {
  /** A new image, or null to remove the current one. */
  image?: FileInput | null;
}

export class VibesResource {
  constructor(private readonly transport: Transport) {}

  /** Adds a vibe at the end of the project's list. */
  create(projectId: string, input: CreateVibeInput, options?: RequestOptions): BandPromise<Vibe> {
    return BandPromise.from(async () => {
      const body = await imageFormOrJson({ name: input.name }, input.image);
      return this.transport.call(ROUTES.createVibe, { params: { projectId }, body }, options).withResponse();
    });
  }

  get(id: string, options?: RequestOptions): BandPromise<VibeWithCuts> {
    return this.transport.call(ROUTES.getVibe, { params: { id } }, options);
  }

  /** Renames, sets a new image, or removes the image with `image: null`. */
  update(id: string, input: UpdateVibeInput, options?: RequestOptions): BandPromise<Vibe> {
    return BandPromise.from(async () => {
      const body = await imageFormOrJson({ name: input.name }, input.image);
      return this.transport.call(ROUTES.updateVibe, { params: { id }, body }, options).withResponse();
    });
  }

  delete(id: string, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.deleteVibe, { params: { id } }, options);
  }

  /** Puts a project's vibes in this order: exactly its vibe ids, each once. */
  reorder(vibeIds: string[], options?: RequestOptions): BandPromise<ReorderVibesResult> {
    return this.transport.call(ROUTES.reorderVibes, { json: { vibeIds } satisfies ReorderVibesRequest }, options);
  }
}
