import { type DispatcherOption, dispatcherOption } from './senders/dispatcher.js';
import { type ErrorCode, STATUS_BY_CODE } from './contract/error-codes.js';
import { type ParamsOf, type PathParamNames, pathOf, type QueryOf, type RequestOf, type ResponseOf, type RouteDeclaration, takesIdempotencyKey } from './contract/route-types.js';
import { ROUTES } from './contract/routes.js';
import { BandPromise } from './band-promise.js';
import { abortedOr, BandApiError, BandConnectionError, BandNetworkError, BandTimeoutError, statusTitle } from './errors.js';
import { defaultSender } from './senders/default.js';
import type { OutgoingBody, ResponseBody, Sender, SenderOptions } from './senders/sender.js';
import { type Tokens, TokenSession, type TokenSessionOptions, type TokenStore } from './session.js';
import { sleep } from './sleep.js';
import type { Problem, RefreshRequest, TokenPair } from './types.js';

/** Per call: overrides the client's settings for one request, as the last argument of every resource method. */
export interface RequestOptions {
  /** Aborts the request; the call rejects with a BandAbortError whose `cause` is the signal's reason. */
  signal?: AbortSignal;
  /** Idle timeout for this call: longest wait for response headers or between two chunks of a body. */
  timeoutMs?: number;
  /** Retries for this call (safe or idempotent requests, and creates, which carry an Idempotency-Key). */
  retries?: number;
  /**
   * Extra request headers (they do not replace Authorization). An `Idempotency-Key` given here replaces the
   * one a create generates: calls that pass the same key do the work once (API §17).
   */
  headers?: Record<string, string>;
}

export interface TransportOptions extends SenderOptions {
  /** The server's address, e.g. `https://band.example.com` (no `/api`). */
  baseUrl: string;
  /**
   * A personal access token (`bcp_…`): sent as the bearer of every call, never refreshed. Instead of
   * `accessToken` and `refreshToken`.
   */
  token?: string;
  accessToken?: string;
  refreshToken?: string;
  /** Called with every new token pair (login, register, refresh) so the caller can persist it. */
  onTokens?: TokenSessionOptions['onTokens'];
  /** Shares the pair with other processes: refreshes reload, lock and save through it. */
  tokenStore?: TokenStore;
  /**
   * How many times a safe or idempotent request, or a create (sent with an Idempotency-Key), is retried after a
   * network error, 429, 502, 503 or 504.
   */
  retries?: number;
  /** Idle timeout: longest wait for response headers or between two chunks of a body. */
  timeoutMs?: number;
  userAgent?: string;
}

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A streamed request body; `open` is called once per attempt, each time reading the bytes afresh. */
export interface StreamBody {
  open(): { body: OutgoingBody; headers: Record<string, string> };
  /**
   * Whether `open` may be called again: always for bytes it reads afresh (a path, a Buffer, a Blob); for a
   * caller's stream, which can be read only once, only while none of it was read.
   */
  reopenable(): boolean;
}

export interface RequestSpec {
  method: Method;
  /** Path under the base URL, query string included, e.g. `/api/projects`. */
  path: string;
  json?: unknown;
  stream?: StreamBody;
  headers?: Record<string, string>;
  /** False for endpoints that take no credentials (login, refresh, public shares). */
  auth?: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
  retries?: number;
  /**
   * The request creates something (the declaration's `takesIdempotencyKey`): it is sent with a generated
   * `Idempotency-Key`, the same on every attempt of the call, and so is retried like an idempotent request.
   */
  creates?: boolean;
}

export interface StreamedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: ResponseBody;
}

const AUTHENTICATED: ReadonlySet<string> = new Set(['session', 'read', 'write', 'review']);

/** A query string's values; undefined ones are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * What a call of a declared route sends beyond its declaration: its path parameters and its body, each only
 * where it has them (a route that takes a form: the form, or the JSON it also takes); its query, typed from the
 * declaration's zod object (its input type), where it declares one; and headers.
 */
export type CallInput<R extends RouteDeclaration> = (PathParamNames<R['path']> extends never ? { params?: never } : { params: ParamsOf<R> }) &
  (R['form'] extends string
    ? { body: Pick<RequestSpec, 'json' | 'stream'> }
    : R['request'] extends string
      ? { json: RequestOf<R> }
      : { json?: never }) & { query?: QueryOf<R> extends undefined ? never : QueryOf<R> & Query; headers?: Record<string, string> };

/**
 * The request of a declared route (contract/routes.ts): its method and path come from the declaration, its
 * parameters fill the path, and credentials go with it where the route authenticates.
 */
export function routeRequest<const R extends RouteDeclaration>(route: R, input: CallInput<R>): RequestSpec {
  const { params, json, body, query, headers } = input as {
    params?: Record<string, string>;
    json?: unknown;
    body?: Pick<RequestSpec, 'json' | 'stream'>;
    query?: Query;
    headers?: Record<string, string>;
  };
  const path = withQuery(pathOf(route, params), query);
  return { method: route.method as Method, path, auth: AUTHENTICATED.has(route.auth), creates: takesIdempotencyKey(route), json, headers, ...body };
}

const IDEMPOTENT: ReadonlySet<Method> = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);
const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
/** A server asking for a longer pause than this gets its error surfaced (with retryAfter) instead of a wait. */
const MAX_RETRY_AFTER_SECONDS = 10;
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * The one place that talks HTTP: base URL, the Authorization header (from its token session, which refreshes),
 * retries, timeouts, and turning failures into BandApiError / BandNetworkError.
 */
export class Transport {
  readonly baseUrl: string;
  readonly retries: number;
  /** The client's dispatcher (Node build): the events socket and the transports for share links use it too. */
  readonly dispatcherOption: DispatcherOption;
  readonly userAgent: string;
  readonly credentials: 'include' | undefined;
  private readonly timeoutMs: number;
  private readonly sender: Sender;
  /** Cookie mode's refresh in flight. */
  private cookieRefresh: Promise<unknown> | undefined;
  private readonly session: TokenSession;

  constructor(options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.retries = options.retries ?? 2;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.dispatcherOption = dispatcherOption(options);
    this.userAgent = options.userAgent ?? 'bandcollab-sdk';
    this.credentials = options.credentials;
    this.sender = defaultSender(options);
    this.session = new TokenSession({
      onTokens: options.onTokens,
      tokenStore: options.tokenStore,
      rotate: (refreshToken) =>
        this.call(ROUTES.refresh, { json: { refreshToken } satisfies RefreshRequest }),
    });
    if (options.token !== undefined && (options.accessToken !== undefined || options.refreshToken !== undefined)) {
      throw new TypeError('Pass either a personal access token (token) or a session pair (accessToken, refreshToken), not both');
    }
    // Without a refresh token nothing is ever refreshed: a personal access token is used as it is.
    this.setTokens(options.token !== undefined ? { accessToken: options.token } : { accessToken: options.accessToken, refreshToken: options.refreshToken });
  }

  /** A transport with the same settings for another server, without credentials (public share links). */
  forServer(baseUrl: string): Transport {
    return new Transport({ baseUrl, ...this.dispatcherOption, retries: this.retries, timeoutMs: this.timeoutMs, userAgent: this.userAgent });
  }

  get tokens(): Tokens {
    return this.session.tokens;
  }

  setTokens(tokens: Partial<Tokens>): void {
    this.session.setTokens(tokens);
  }

  /** Keeps a new pair, saves it in the token store and hands it to onTokens; in cookie mode the cookies hold it instead. */
  storeTokens(pair: TokenPair): Promise<void> {
    return this.credentials === 'include' ? Promise.resolve() : this.session.storeTokens(pair);
  }

  /** Rotates the token pair; concurrent callers share one refresh request. */
  refresh(): Promise<TokenPair> {
    return this.session.refresh();
  }

  /**
   * Cookie mode: the refresh_token cookie rotates both cookies. Calls that meet the expired access cookie together
   * share one refresh: a second one would present the rotated refresh token, and the server would end the session.
   */
  private refreshCookies(): Promise<unknown> {
    this.cookieRefresh ??= this.json(routeRequest(ROUTES.refresh, { json: {} })).finally(() => {
      this.cookieRefresh = undefined;
    });
    return this.cookieRefresh;
  }

  /** An access token that is not about to expire, refreshing first when needed. */
  freshAccessToken(): Promise<string | undefined> {
    return this.session.freshAccessToken();
  }

  /** Calls a declared route (see routeRequest); the answer has the declared record's type. */
  call<const R extends RouteDeclaration>(route: R, input: CallInput<R>, options?: RequestOptions): BandPromise<ResponseOf<R>> {
    return this.json<ResponseOf<R>>(routeRequest(route, input), options);
  }

  /** Calls a declared route whose answer is not a JSON record (bytes, a redirect, headers): the response, its body unread. */
  open<const R extends RouteDeclaration>(route: R, input: CallInput<R>, options?: RequestOptions): Promise<StreamedResponse> {
    return this.send(routeRequest(route, input), options);
  }

  /** Sends a request and parses the JSON answer; `.withResponse()` gives the response's status and headers beside it. */
  json<T>(spec: RequestSpec, options?: RequestOptions): BandPromise<T> {
    return BandPromise.from(async () => {
      const response = await this.send(spec, options);
      const data = (await response.body.json().catch((error: unknown) => Promise.reject(abortedOr(error, joinedSignal(spec.signal, options?.signal))))) as T;
      return { data, response: { status: response.status, headers: response.headers } };
    });
  }

  /** Sends a request and hands back the successful response with its body unread. */
  async send(request: RequestSpec, options: RequestOptions = {}): Promise<StreamedResponse> {
    const spec = withIdempotencyKey(withRequestOptions(request, options));
    try {
      const usesAuth = spec.auth !== false;
      let token = usesAuth ? await this.freshAccessToken() : undefined;
      let response = await this.sendWithRetries(spec, token);
      const cookieSession = usesAuth && token === undefined && this.credentials === 'include';
      if (response.status === 401 && (cookieSession || (token !== undefined && this.tokens.refreshToken)) && (spec.stream?.reopenable() ?? true)) {
        const error = await problemFrom(response);
        if (error.code !== 'TOKEN_EXPIRED') throw error;
        if (cookieSession) await this.refreshCookies();
        else if (this.tokens.accessToken === token) await this.refresh();
        token = this.tokens.accessToken;
        response = await this.sendWithRetries(spec, token);
      }
      if (response.status >= 400) throw await problemFrom(response);
      return response;
    } catch (error) {
      throw abortedOr(error, spec.signal);
    }
  }

  /**
   * An idempotent call, or one with an Idempotency-Key, is sent again after a broken connection or a
   * 429/502/503/504, and a keyed one also after a 409 with Retry-After (its key's first request still runs on the
   * server, API §17). Any other call only after a 429: the server refused it before doing anything (parallel CI
   * jobs signing in from one address share its password checks), so sending it again cannot do its work twice.
   * Each attempt reads its body afresh; a caller's one-shot stream is sent again only if none of it was read.
   */
  private async sendWithRetries(spec: RequestSpec, token: string | undefined): Promise<StreamedResponse> {
    const retries = spec.retries ?? this.retries;
    const keyed = spec.headers?.[IDEMPOTENCY_KEY] !== undefined;
    const idempotent = IDEMPOTENT.has(spec.method) || keyed;
    const canSendAgain = (attempt: number) => attempt < retries && (spec.stream?.reopenable() ?? true);
    // The server's last error answer: when a retry then finds no server at all (it was shutting down, as its 503
    // said), that answer says more than the refused connection.
    let lastAnswer: BandApiError | undefined;
    for (let attempt = 0; ; attempt += 1) {
      let response: StreamedResponse;
      try {
        response = await this.sendOnce(spec, token);
      } catch (cause) {
        if (spec.signal?.aborted) throw cause;
        if (!idempotent || !canSendAgain(attempt)) throw lastAnswer ?? networkError(cause, spec);
        await sleep(backoffMs(attempt), spec.signal);
        continue;
      }
      const stillRunning = keyed && response.status === 409 && response.headers['retry-after'] !== undefined;
      const retried = idempotent ? RETRY_STATUSES.has(response.status) || stillRunning : response.status === 429;
      if (!retried || !canSendAgain(attempt)) return response;
      const retryAfter = retryAfterSeconds(response.headers);
      if (retryAfter !== null && retryAfter > MAX_RETRY_AFTER_SECONDS) return response;
      lastAnswer = await problemFrom(response);
      await sleep(retryAfter !== null ? retryAfter * 1000 : backoffMs(attempt), spec.signal);
    }
  }

  /** One attempt: one HTTP request, its body read afresh. */
  private async sendOnce(spec: RequestSpec, token: string | undefined): Promise<StreamedResponse> {
    const headers: Record<string, string> = { 'user-agent': this.userAgent, accept: 'application/json', ...spec.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    let body: OutgoingBody | undefined;
    if (spec.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.json);
    } else if (spec.stream) {
      const opened = spec.stream.open();
      Object.assign(headers, opened.headers);
      body = opened.body;
    }
    return this.sender({ url: this.baseUrl + spec.path, method: spec.method, headers, body, signal: spec.signal, timeoutMs: spec.timeoutMs ?? this.timeoutMs });
  }
}

/** A request with a call's options folded in: its headers added, its signal joined to the request's own. */
function withRequestOptions(spec: RequestSpec, options: RequestOptions): RequestSpec {
  return {
    ...spec,
    headers: options.headers ? { ...options.headers, ...spec.headers } : spec.headers,
    signal: joinedSignal(spec.signal, options.signal),
    timeoutMs: options.timeoutMs ?? spec.timeoutMs,
    retries: options.retries ?? spec.retries,
  };
}

const IDEMPOTENCY_KEY = 'idempotency-key';

/**
 * A create with its Idempotency-Key: the caller's (any spelling of the header), else a generated one. One key per
 * call, kept across its attempts and its resend after a refresh: the server does the work once.
 */
function withIdempotencyKey(spec: RequestSpec): RequestSpec {
  const headers = Object.fromEntries(Object.entries(spec.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  if (headers[IDEMPOTENCY_KEY] === undefined && !spec.creates) return spec;
  headers[IDEMPOTENCY_KEY] ??= crypto.randomUUID();
  return { ...spec, headers };
}

/** The given signals as one (either aborts); undefined when none is given. */
export function joinedSignal(...signals: Array<AbortSignal | undefined>): AbortSignal | undefined {
  const present = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  return present.length > 1 ? AbortSignal.any(present) : present[0];
}

/** Reads an error response into a BandApiError, whether or not the body is problem+json. */
async function problemFrom(response: StreamedResponse): Promise<BandApiError> {
  const text = await response.body.text().catch(() => '');
  const header = (name: string) => single(response.headers[name]);
  const title = statusTitle(response.status);
  let problem: Problem = {
    type: 'about:blank',
    title,
    status: response.status,
    detail: text.trim().slice(0, 200) || title,
    code: defaultCode(response.status),
    requestId: header('x-request-id') ?? '',
  };
  if (/json/.test(header('content-type') ?? '')) {
    try {
      const parsed = JSON.parse(text) as Partial<Problem>;
      if (typeof parsed.code === 'string') problem = { ...problem, ...parsed, status: response.status };
    } catch {
      // Not JSON after all (a proxy's error page): keep the generic problem.
    }
  }
  return new BandApiError(problem, retryAfterSeconds(response.headers));
}

function networkError(cause: unknown, spec: RequestSpec): BandNetworkError {
  const code = (cause as { code?: string }).code ?? '';
  const reason = cause instanceof Error ? cause.message : String(cause);
  if (spec.stream && RESET_CODES.has(code)) {
    return new BandConnectionError(
      `The connection was closed during the upload, before the server answered: it may have refused the file or be restarting (a file over its size limit, a full disk or your quota is refused this way); try again (${reason})`,
      { cause },
    );
  }
  if (TIMEOUT_CODES.has(code)) return new BandTimeoutError(`${spec.method} ${spec.path} timed out: ${reason}`, { cause });
  return new BandConnectionError(`${spec.method} ${spec.path} failed: ${reason}`, { cause });
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * The code an error answer without problem details (a proxy's page) is given: the generic code of its status
 * (the contract's STATUS_BY_CODE), a gateway's 502 and 504 being UNAVAILABLE like a 503; any other status INTERNAL.
 */
const CODE_BY_STATUS: ReadonlyMap<number, ErrorCode> = new Map([
  ...(['VALIDATION_FAILED', 'UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED', 'UNAVAILABLE', 'INSUFFICIENT_STORAGE'] as const).map(
    (code) => [STATUS_BY_CODE[code], code] as const,
  ),
  [502, 'UNAVAILABLE'],
  [504, 'UNAVAILABLE'],
]);

function defaultCode(status: number): ErrorCode {
  return CODE_BY_STATUS.get(status) ?? 'INTERNAL';
}

/** `path?name=value…` with the defined values of `query`. */
export function withQuery(path: string, query: Query | undefined): string {
  const defined = Object.entries(query ?? {}).filter((entry): entry is [string, string | number | boolean] => entry[1] !== undefined);
  return defined.length === 0 ? path : `${path}?${new URLSearchParams(defined.map(([name, value]) => [name, String(value)])).toString()}`;
}

/** A response header's value; the first when it came more than once. */
export function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After as seconds: a number of seconds or an HTTP date. */
function retryAfterSeconds(headers: StreamedResponse['headers']): number | null {
  const value = single(headers['retry-after']);
  if (value === undefined) return null;
  if (/^\d+$/.test(value.trim())) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** Exponential backoff with jitter: 125–250 ms, 250–500 ms, … capped at 4 s. */
export function backoffMs(attempt: number): number {
  const ceiling = Math.min(4000, 250 * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}
