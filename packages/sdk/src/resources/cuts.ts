import { type RequestOptions, segment, type Transport } from '../transport.js';
import type { CreateCutRequest, Cut, CutWithFiles, Deleted, MoveCutRequest, UpdateCutRequest } from '../types.js';

export class CutsResource {
  constructor(private readonly transport: Transport) {}

  create(vibeId: string, input: CreateCutRequest, options?: RequestOptions): Promise<Cut> {
    return this.transport.json<Cut>({ method: 'POST', path: `/api/vibes/${segment(vibeId)}/cuts`, json: input }, options);
  }

  get(id: string, options?: RequestOptions): Promise<CutWithFiles> {
    return this.transport.json<CutWithFiles>({ method: 'GET', path: `/api/cuts/${segment(id)}` }, options);
  }

  update(id: string, input: UpdateCutRequest, options?: RequestOptions): Promise<Cut> {
    return this.transport.json<Cut>({ method: 'PUT', path: `/api/cuts/${segment(id)}`, json: input }, options);
  }

  /** Deletes the cut and its files. */
  delete(id: string, options?: RequestOptions): Promise<Deleted> {
    return this.transport.json<Deleted>({ method: 'DELETE', path: `/api/cuts/${segment(id)}` }, options);
  }

  /** Moves the cut to another vibe of the same project. */
  move(id: string, targetVibeId: string, options?: RequestOptions): Promise<Cut> {
    return this.transport.json<Cut>({ method: 'PUT', path: `/api/cuts/${segment(id)}/move`, json: { targetVibeId } satisfies MoveCutRequest }, options);
  }
}
