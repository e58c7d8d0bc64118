import { segment, type Transport } from '../transport.js';
import type { CreateCutRequest, Cut, CutWithFiles, Deleted, MoveCutRequest, UpdateCutRequest } from '../types.js';

export class CutsResource {
  constructor(private readonly transport: Transport) {}

  create(vibeId: string, input: CreateCutRequest): Promise<Cut> {
    return this.transport.json<Cut>({ method: 'POST', path: `/api/vibes/${segment(vibeId)}/cuts`, json: input });
  }

  get(id: string): Promise<CutWithFiles> {
    return this.transport.json<CutWithFiles>({ method: 'GET', path: `/api/cuts/${segment(id)}` });
  }

  update(id: string, input: UpdateCutRequest): Promise<Cut> {
    return this.transport.json<Cut>({ method: 'PUT', path: `/api/cuts/${segment(id)}`, json: input });
  }

  /** Deletes the cut and its files. */
  delete(id: string): Promise<Deleted> {
    return this.transport.json<Deleted>({ method: 'DELETE', path: `/api/cuts/${segment(id)}` });
  }

  /** Moves the cut to another vibe of the same project. */
  move(id: string, targetVibeId: string): Promise<Cut> {
    return this.transport.json<Cut>({ method: 'PUT', path: `/api/cuts/${segment(id)}/move`, json: { targetVibeId } satisfies MoveCutRequest });
  }
}
