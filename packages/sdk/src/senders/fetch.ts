import type { ResponseBody, SendFailure, Sender } from './sender.js';

export interface FetchSenderOptions {
  /** `include` sends the server's HttpOnly cookies with every request (a browser app on an allowed origin). */
  credentials?: RequestCredentials;
  /** Node's fetch (undici inside) sends through this dispatcher when given; other runtimes have none. */
  dispatcher?: unknown;
  /**
   * `manual` hands a redirect back to the transport (the Node build: the identity provider's flows read the
   * `Location` of a 302, as undici.request does); browsers follow redirects, which they cannot show to scripts.
   */
  redirect?: RequestRedirect;
}

/**
 * Sends with the runtime's `fetch` (browsers, Deno, Bun, Workers). The idle timeout is the transport's: it
 * aborts the request when the headers, or the next chunk of the body, take longer than `timeoutMs`.
 */
export function fetchSender(options: FetchSenderOptions = {}): Sender {
  return async (request) => {
    const idle = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, idle.signal]) : idle.signal;
    const timer = setTimeout(() => idle.abort(failure('headers timed out', 'UND_ERR_HEADERS_TIMEOUT')), request.timeoutMs);
    const streamed = typeof request.body === 'object' && !(request.body instanceof Blob) && !(request.body instanceof FormData);
    let response: Response;
    try {
      response = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body as BodyInit | undefined,
        signal,
        credentials: options.credentials,
        redirect: options.redirect,
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
        // A stream is sent as it is read (fetch requires saying so).
        ...(streamed ? { duplex: 'half' } : {}),
      } as RequestInit);
    } catch (error) {
      throw request.signal?.aborted ? request.signal.reason : idle.signal.aborted ? idle.signal.reason : connectionFailure(error);
    } finally {
      clearTimeout(timer);
    }
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: bodyOf(response.body, request.timeoutMs, idle),
    };
  };
}

/** The body, each read given `idleMs` before the request is aborted. */
function bodyOf(source: ReadableStream<Uint8Array> | null, idleMs: number, idle: AbortController): ResponseBody {
  const reader = source?.getReader();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!reader) return controller.close();
      const timer = setTimeout(() => idle.abort(failure('the body stalled', 'UND_ERR_BODY_TIMEOUT')), idleMs);
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.error(idle.signal.aborted ? idle.signal.reason : connectionFailure(error));
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: (reason) => reader?.cancel(reason),
  });
  const text = () => new Response(stream).text();
  return {
    text,
    json: async () => JSON.parse(await text()) as unknown,
    dump: () => stream.cancel().catch(() => undefined),
    destroy: () => void stream.cancel().catch(() => undefined),
    stream: () => stream,
    // Not every browser iterates a ReadableStream itself yet.
    async *[Symbol.asyncIterator]() {
      const chunks = stream.getReader();
      try {
        for (let next = await chunks.read(); !next.done; next = await chunks.read()) yield next.value;
      } finally {
        chunks.releaseLock();
      }
    },
  };
}

function failure(message: string, code: string): SendFailure {
  return Object.assign(new Error(message), { code });
}

/** fetch says only "fetch failed"; Node's puts the socket's error code in `cause`. */
function connectionFailure(error: unknown): SendFailure {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return Object.assign(new Error(cause?.message ?? (error instanceof Error ? error.message : String(error)), { cause: error }), { code: cause?.code });
}
