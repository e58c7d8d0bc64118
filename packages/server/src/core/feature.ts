import type { Server } from 'node:http';
import type { Routes } from './routes.js';

/** A feature's HTTP surface. The composition root registers each one, in order, on one App. */
export interface Feature {
  /** Registers its routes, each from its declaration (contract/routes.ts). */
  register(routes: Routes): void;
  /** Runs once the HTTP server exists and before it listens: WebSocket upgrades, storage directories. */
  start?(server: Server): Promise<void>;
  /**
   * Runs on shutdown, once the server stopped accepting connections and while requests in flight drain:
   * it ends the connections the drain would wait for forever (WebSockets). The database closes after.
   */
  stop?(): Promise<void>;
}
