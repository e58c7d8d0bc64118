import type { Transport } from '../transport.js';

/**
 * Live project events over the WebSocket of API.md §7. The transport gives the base URL, the dispatcher
 * and `freshAccessToken()` for the Authorization header of the upgrade.
 */
export class EventsResource {
  constructor(protected readonly transport: Transport) {}
}
