import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ResponseBody, SendFailure, Sender } from './sender.js';

/**
 * Sends a request whose body is text (JSON) or nothing with node:http (node:https for https): Node's `fetch` loads
 * the undici inside Node first, some 40 ms of a command that sends one small request. Node's global agent keeps
 * the connection for the next request and lets the process exit while it idles. The idle timeout is the
 * transport's: the headers, or the next chunk of the body, may take at most `timeoutMs`.
 */
export function nodeHttpSender(): Sender {
  return (request) =>
    new Promise((resolve, reject) => {
      if (request.signal?.aborted) return reject(request.signal.reason);
      // Not `import`ed: an ES module's namespace of node:http reads every export, and its WebSocket getters load
      // the undici inside Node all the same.
      const { request: send } = process.getBuiltinModule(request.url.startsWith('https:') ? 'node:https' : 'node:http');
      const body = typeof request.body === 'string' ? request.body : undefined;
      const headers: Record<string, string> = { ...request.headers };
      if (body !== undefined || !['GET', 'HEAD'].includes(request.method)) headers['content-length'] = String(Buffer.byteLength(body ?? ''));
      let response: IncomingMessage | undefined;
      const onAbort = () => (response ?? outgoing).destroy(request.signal!.reason as Error);
      const outgoing = send(request.url, { method: request.method, headers });
      request.signal?.addEventListener('abort', onAbort, { once: true });
      outgoing.setTimeout(request.timeoutMs, () => {
        if (response) response.destroy(failure('the body stalled', 'UND_ERR_BODY_TIMEOUT'));
        else outgoing.destroy(failure('headers timed out', 'UND_ERR_HEADERS_TIMEOUT'));
      });
      outgoing.on('error', (error) => {
        request.signal?.removeEventListener('abort', onAbort);
        reject(request.signal?.aborted ? request.signal.reason : error);
      });
      outgoing.on('response', (incoming) => {
        response = incoming;
        incoming.on('close', () => request.signal?.removeEventListener('abort', onAbort));
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: bodyOf(incoming) });
      });
      outgoing.end(body);
    });
}

function bodyOf(incoming: IncomingMessage): ResponseBody {
  const text = async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  return {
    text,
    json: async () => JSON.parse(await text()) as unknown,
    dump: async () => {
      // Reads to the end, so the connection goes back to the agent.
      for await (const _ of incoming);
    },
    destroy: () => void incoming.destroy(),
    stream: () => Readable.toWeb(incoming) as ReadableStream<Uint8Array>,
    [Symbol.asyncIterator]: () => incoming[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>,
  };
}

function failure(message: string, code: string): SendFailure {
  return Object.assign(new Error(message), { code });
}
