import { toBase64url } from './base64url.js';
import type { Transport } from './transport.js';

/**
 * Browsers cannot set headers on a WebSocket: the token goes as a subprotocol the server reads and never selects
 * (it answers `bandcollab.v1`). Without a token (cookie mode) the browser sends the HttpOnly access cookie.
 */
export async function openEventsSocket(_transport: Transport, url: string, token: string | undefined): Promise<WebSocket> {
  return new WebSocket(url, token ? ['bandcollab.v1', `bandcollab.bearer.${toBase64url(token)}`] : undefined);
}
