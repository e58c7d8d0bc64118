import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { ResponseBody, Sender } from './sender.js';

let undici: Promise<typeof import('undici')> | undefined;

/**
 * undici is most of the SDK's code to parse and compile: it is imported by the first request, not with the SDK,
 * so a CLI command starts without waiting for it before it has anything to send.
 */
export function loadUndici(): Promise<typeof import('undici')> {
  // undici is CommonJS: its exports are the namespace's default (a bundler's chunk of it, as the CLI's, has only that).
  undici ??= import('undici').then((module) => ((module as { default?: unknown }).default ?? module) as typeof module);
  return undici;
}

/**
 * Sends with `undici.request` (Node): it streams a request body as it is read, where Node's `fetch` keeps a whole
 * streamed upload in memory.
 */
export function undiciSender(dispatcher: Dispatcher | undefined): Sender {
  return async (request) => {
    const { request: send } = await loadUndici();
    const response = await send(request.url, {
      method: request.method as Dispatcher.HttpMethod,
      headers: request.headers,
      body: request.body as Dispatcher.DispatchOptions['body'],
      signal: request.signal,
      dispatcher,
      headersTimeout: request.timeoutMs,
      bodyTimeout: request.timeoutMs,
    });
    const body = response.body as Dispatcher.ResponseData['body'] & ResponseBody;
    body.stream = () => Readable.toWeb(body) as ReadableStream<Uint8Array>;
    return { status: response.statusCode, headers: response.headers, body };
  };
}
