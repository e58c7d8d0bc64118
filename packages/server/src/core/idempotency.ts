import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { inject, injectable } from 'tsyringe';
import type { Clock } from './clock.js';
import { CLOCK, LOGGER, SIGNING_SECRET } from './di.js';
import { DomainError, invalidField } from './errors.js';
import { requestId } from './http.js';
import { IdempotencyRepository } from './idempotency-repository.js';
import type { Logger } from './logger.js';
import { seal, unseal } from './sealed.js';

/** How long a key holds its first answer (API §17); the purge deletes older ones. */
export const IDEMPOTENCY_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

const KEY_PATTERN = /^[!-~]{1,255}$/;

/** What a kept answer is sealed for (`core/sealed.ts`): its key is no other record's. */
const ANSWER_PURPOSE = 'bandcollab idempotent answer';

/** Headers that belong to one response, not to the answer: a replay gets its own. */
const PER_RESPONSE_HEADERS = /^(date|connection|keep-alive|transfer-encoding|x-request-id|set-cookie|vary|access-control-.*)$/;

/** A request that carries an Idempotency-Key, and what makes another request with that key the same request. */
export interface KeyedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  userId: string;
  /**
   * The credential that sent it: a personal access token's id, or null for the user's sessions (which all hold
   * the user's own rights). A token may reach less than its owner (some projects, read only), so an answer kept
   * for one credential is never replayed to another: it would skip the route's access check.
   */
  tokenId: string | null;
  key: string;
  /** The body as read before the handler runs (JSON), or undefined for a body the handler streams (multipart, tus). */
  json: unknown;
}

interface StoredAnswer {
  headers: Record<string, string | string[]>;
  body: string;
}

/** The request's Idempotency-Key: undefined when absent, 400 VALIDATION_FAILED when malformed. */
export function idempotencyKeyOf(req: IncomingMessage): string | undefined {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) throw invalidField('Idempotency-Key', 'must be 1 to 255 visible ASCII characters (! to ~)');
  return key;
}

/**
 * Runs a creating request once per user, credential and Idempotency-Key (API §17): the first runs and its answer is kept
 * (4xx too; 5xx not: a retry runs again); a repeat with the same method, path and body gets that answer with
 * `Idempotent-Replayed: true`, another body or a repeat while the first runs gets 409 IDEMPOTENCY_CONFLICT.
 * The claim is a row in PostgreSQL, so several instances agree.
 */
@injectable()
export class Idempotency {
  constructor(
    @inject(IdempotencyRepository) private readonly repository: IdempotencyRepository,
    @inject(SIGNING_SECRET) private readonly secret: string,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(LOGGER) private readonly log: Logger,
  ) {}

  async once(request: KeyedRequest, run: () => Promise<void>): Promise<void> {
    const { req, res, userId } = request;
    // The credential is part of the key (and of the fingerprint and the seal): a token and a session of one user
    // never share a key's answer.
    const keyHash = createHash('sha256').update(credentialKey(request)).digest('hex');
    const now = this.clock.now();
    const taken = await this.repository.claim({
      userId,
      keyHash,
      fingerprint: fingerprintOf(request),
      now: new Date(now),
      expiredBefore: new Date(now - IDEMPOTENCY_KEY_LIFETIME_MS),
    });
    if (taken !== true) {
      // Answered before a streamed body (multipart, tus creation-with-upload) is read: the connection drops the
      // rest (core/connections.ts).
      if (taken === null || taken.status === null) {
        throw new DomainError('IDEMPOTENCY_CONFLICT', 'A request with this Idempotency-Key is still running; try again shortly', { retryAfterSeconds: 1 });
      }
      if (taken.fingerprint !== fingerprintOf(request)) {
        throw new DomainError('IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was used with another method, path or body');
      }
      const answer = this.open(taken.answer!, credentialKey(request), userId);
      if (!answer) throw new DomainError('IDEMPOTENCY_CONFLICT', 'The first answer to this Idempotency-Key can no longer be read (the server’s secret changed); use a new key');
      res.writeHead(taken.status, { ...answer.headers, 'Idempotent-Replayed': 'true' });
      res.end(Buffer.from(answer.body, 'base64'));
      return;
    }

    let answered = false;
    keepAnswerBeforeSending(res, async (status, headers, body) => {
      answered = true;
      try {
        if (status >= 500) await this.repository.release(userId, keyHash);
        else await this.repository.complete(userId, keyHash, status, this.seal({ headers, body: body.toString('base64') }, credentialKey(request), userId));
      } catch (error) {
        this.log.error('an idempotent answer could not be kept', { reqId: requestId(req), error });
        await this.repository.release(userId, keyHash).catch(() => undefined);
      }
    });
    const running = run();
    // A request that ends without an answer (its connection lost, an error after the response started) frees
    // its key once it has finished, never earlier: a retry while it still runs must not do its work again.
    res.once('close', () => {
      void running.then(
        () => undefined,
        () => undefined,
      ).then(() => {
        if (!answered) return this.repository.release(userId, keyHash).catch((error: unknown) => this.log.warn('an idempotency key could not be freed', { error }));
      });
    });
    await running;
  }

  async purgeExpired(): Promise<number> {
    return this.repository.deleteCreatedBefore(new Date(this.clock.now() - IDEMPOTENCY_KEY_LIFETIME_MS));
  }

  /**
   * Sealed under a key derived from the server's secret, the Idempotency-Key and the user (API §17): the
   * database alone never yields a secret the answer holds, and a row moved to another user does not open.
   */
  private seal(answer: StoredAnswer, key: string, userId: string): Buffer {
    return seal(this.secret, ANSWER_PURPOSE, answerContext(key, userId), JSON.stringify(answer));
  }

  /** The kept answer, or null when it does not open (the server's secret changed since). */
  private open(stored: Buffer, key: string, userId: string): StoredAnswer | null {
    const opened = unseal(this.secret, ANSWER_PURPOSE, answerContext(key, userId), stored);
    return opened === null ? null : (JSON.parse(opened) as StoredAnswer);
  }
}

/** The Idempotency-Key as kept for its credential: `session <key>` or `token <id> <key>` (a key has no space). */
const credentialKey = ({ tokenId, key }: KeyedRequest): string => (tokenId === null ? `session ${key}` : `token ${tokenId} ${key}`);

/** A user id is a UUID and a credential key ends with the key, so no two (user, key) pairs give the same context. */
const answerContext = (key: string, userId: string): string => `${userId} ${key}`;

/** The credential, method, path and body: for JSON the parsed body (key order aside), for tus creation its length and metadata. */
function fingerprintOf({ req, json, tokenId }: KeyedRequest): string {
  const parts = [tokenId, req.method, (req.url ?? '').split('?')[0], canonical(json) ?? null, req.headers['upload-length'] ?? null, req.headers['upload-metadata'] ?? null];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** A JSON value with its objects' keys sorted, so `{a,b}` and `{b,a}` fingerprint alike. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((name) => [name, canonical((value as Record<string, unknown>)[name])]));
}

/**
 * Hands the answer to `keep` when the handler (or the error handler) ends the response, and only then lets the
 * end go out: a client that has the answer finds it kept. Headers are read from the response, where
 * `writeHead` merges its own once any header was set (setCommonHeaders sets some on every response).
 */
function keepAnswerBeforeSending(res: ServerResponse, keep: (status: number, headers: Record<string, string | string[]>, body: Buffer) => Promise<void>): void {
  const chunks: Buffer[] = [];
  const collect = (chunk: unknown, encoding: unknown) => {
    if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((...args: unknown[]) => {
    collect(args[0], args[1]);
    return write(...args);
  }) as ServerResponse['write'];
  res.end = ((...args: unknown[]) => {
    collect(args[0], args[1]);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(res.getHeaders())) {
      if (value !== undefined && !PER_RESPONSE_HEADERS.test(name)) headers[name] = typeof value === 'number' ? String(value) : value;
    }
    void keep(res.statusCode, headers, Buffer.concat(chunks)).finally(() => end(...args));
    return res;
  }) as ServerResponse['end'];
}
