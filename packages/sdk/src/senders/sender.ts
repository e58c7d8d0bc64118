import type { DispatcherOption } from './dispatcher.js';

/**
 * The one thing a runtime must do for the transport: send one request and hand back its answer, body unread.
 * Auth, refresh, retries and errors stay in the transport; a sender neither retries nor reads a status.
 */
export type Sender = (request: OutgoingRequest) => Promise<SentResponse>;

/** A request body: text (JSON), a Node stream or any async iterable of bytes, a Web stream, a Blob, a FormData. */
export type OutgoingBody = string | AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | Blob | FormData;

export interface OutgoingRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: OutgoingBody;
  signal?: AbortSignal;
  /** Idle timeout: longest wait for response headers or between two chunks of a body. */
  timeoutMs: number;
}

export interface SentResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string | string[] | undefined>;
  body: ResponseBody;
}

/** A response body, read at most once. */
export interface ResponseBody extends AsyncIterable<Uint8Array> {
  json(): Promise<unknown>;
  text(): Promise<string>;
  /** Discards the rest, so the connection can be reused. */
  dump(): Promise<void>;
  /** Stops reading and closes the body. */
  destroy(): void;
  /** The unread bytes as a Web stream. */
  stream(): ReadableStream<Uint8Array>;
}

/**
 * Why a sender failed, in the transport's words: `code` is the failure's kind (the names undici gives them,
 * which the fetch sender uses too, so the transport reads one set).
 */
export interface SendFailure extends Error {
  code?: string;
}

/** What a client's options say of how to send: the transport's options extend these. */
export interface SenderOptions extends DispatcherOption {
  /**
   * Web build: `include` signs requests with the server's HttpOnly cookies (set by `auth.login` on a same-site
   * server) instead of tokens held in JavaScript.
   */
  credentials?: 'include';
}
