import { loadUndici } from './senders/undici.js';
import type { Transport } from './transport.js';

/** Node: undici's WebSocket, which sends headers (the bearer token, the user agent) and uses the client's dispatcher. */
export async function openEventsSocket(transport: Transport, url: string, token: string | undefined): Promise<WebSocket> {
  const { WebSocket } = await loadUndici();
  const headers: Record<string, string> = { 'user-agent': transport.userAgent };
  if (token) headers.authorization = `Bearer ${token}`;
  return new WebSocket(url, { headers, dispatcher: transport.dispatcherOption.dispatcher }) as unknown as WebSocket;
}
