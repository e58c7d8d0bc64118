import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Request, Response } from '@tinyhttp/app';
import { parse as parseCookies, serialize, type SerializeOptions } from '@tinyhttp/cookie';
import { type FieldError, isUuid, type Problem, STATUS_BY_CODE } from '@bandcollab/sdk/contract';
import { p as bodyReader } from 'milliparsec';
import type { z } from 'zod';
import { DomainError, notFound, validationFailed } from './errors.js';

export type { Request, Response };

const MAX_JSON_BYTES = 1024 * 1024;
const SANE_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

const requestIds = new WeakMap<IncomingMessage, string>();

/** The request id: a sane incoming `X-Request-Id`, else a new one; remembered, so logs and the response header agree. */
export function requestId(req: IncomingMessage): string {
  let id = requestIds.get(req);
  if (id === undefined) {
    const incoming = req.headers['x-request-id'];
    id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    requestIds.set(req, id);
  }
  return id;
}

/**
 * What every response carries: its request id; `nosniff`, so no body is ever read as another
 * type than it says; `Referrer-Policy: no-referrer`, so a page's links (a share or invitation page, whose URL is
 * the secret) never pass its address on. Set on every response, not only pages: no page can then miss it.
 */
export function setCommonHeaders(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('X-Request-Id', requestId(req));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/**
 * JSON answers are never stored by a cache (`no-store`): most are one user's data, and keying that on
 * credentials is easy to get wrong; the public few (health, the OpenAPI document) are cheap to send again.
 * File bytes (transfer.ts) keep their own validators.
 */
const JSON_CACHE_CONTROL = { 'Cache-Control': 'no-store' };

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...JSON_CACHE_CONTROL,
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/** 201 with the created record and its `Location`. */
export function sendCreated(res: ServerResponse, location: string, body: unknown): void {
  sendJson(res, 201, body, { Location: location });
}

/**
 * What the HTTP layer answers beyond the error's code: a status no error code names (416, for a byte range
 * outside the file: the contract gives it no code of its own, so its body says VALIDATION_FAILED) and headers
 * about the request rather than the error (`Content-Range`).
 */
export interface ProblemOverrides {
  status?: number;
  headers?: Record<string, string>;
}

/** The headers an error implies: a 401 names the Bearer scheme (RFC 9110 §15.5.2); a known wait is `Retry-After`. */
export function problemHeaders(error: DomainError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.code === 'TOKEN_EXPIRED') headers['WWW-Authenticate'] = 'Bearer error="invalid_token", error_description="expired"';
  else if (STATUS_BY_CODE[error.code] === 401) headers['WWW-Authenticate'] = 'Bearer';
  if (error.details.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.details.retryAfterSeconds);
  return headers;
}

/** Answers an error as problem details, with the status its code has (STATUS_BY_CODE). */
export function sendProblem(req: IncomingMessage, res: ServerResponse, error: DomainError, overrides: ProblemOverrides = {}): void {
  const status = overrides.status ?? STATUS_BY_CODE[error.code];
  const problem: Problem = {
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail: error.detail,
    code: error.code,
    requestId: requestId(req),
  };
  if (error.details.errors) problem.errors = error.details.errors;
  if (error.details.fileId) problem.fileId = error.details.fileId;
  const payload = JSON.stringify(problem);
  res.writeHead(status, {
    ...JSON_CACHE_CONTROL,
    ...problemHeaders(error),
    ...overrides.headers,
    'Content-Type': 'application/problem+json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
  });
  res.end(req.method === 'HEAD' ? undefined : payload);
}

/** A path id that is not a UUID names nothing: 404, as the API says. */
export function idParam(req: Request, name: string, what: string): string {
  const value = req.params[name];
  if (!isUuid(value)) throw notFound(what);
  return value.toLowerCase();
}

export function contentType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export const isMultipart = (req: IncomingMessage): boolean => contentType(req) === 'multipart/form-data';

export function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

const readJsonBuffer = bodyReader<unknown>(
  (body) => (body.length === 0 ? undefined : JSON.parse(body.toString('utf8'))),
  MAX_JSON_BYTES,
  () => new DomainError('PAYLOAD_TOO_LARGE', 'JSON bodies are limited to 1 MiB'),
);

/** Reads a JSON body (≤ 1 MiB). No body reads as `{}`; another content type is 415. */
export function readJson(req: Request, res: Response): Promise<unknown> {
  let reading = jsonBodies.get(req);
  if (reading === undefined) {
    reading = readJsonOnce(req, res);
    jsonBodies.set(req, reading);
  }
  return reading;
}

/**
 * A request's body can be read once, and some are asked for twice: a keyed create's body is read before its
 * handler (idempotency fingerprint), and handlers that take JSON or a form (ImageForms) read it themselves. A
 * second read of the consumed stream would wait forever.
 */
const jsonBodies = new WeakMap<IncomingMessage, Promise<unknown>>();

async function readJsonOnce(req: Request, res: Response): Promise<unknown> {
  if (!hasBody(req)) return {};
  if (contentType(req) !== 'application/json') {
    throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'This endpoint takes application/json');
  }
  let failure: unknown;
  const body = await readJsonBuffer(req, res, (error?: unknown) => {
    failure ??= error;
  });
  if (failure instanceof SyntaxError) throw new DomainError('INVALID_JSON', 'The request body is not valid JSON');
  // The rest of an oversized body is read and dropped after the 413 (core/connections.ts).
  if (failure !== undefined) throw failure;
  return body ?? {};
}

/** Checks a value against a schema; every problem becomes one entry of a 400 VALIDATION_FAILED. */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors: FieldError[] = result.error.issues.map((issue) => ({
    field: issue.path.length > 0 ? issue.path.join('.') : 'body',
    message: issue.message,
  }));
  throw validationFailed(errors);
}

/** Reads and validates a JSON body in one step. */
export async function jsonBody<S extends z.ZodType>(req: Request, res: Response, schema: S): Promise<z.infer<S>> {
  return validate(schema, await readJson(req, res));
}

export function cookies(req: IncomingMessage): Record<string, string> {
  const header = req.headers.cookie;
  return header ? parseCookies(header) : {};
}

export function appendCookie(res: ServerResponse, name: string, value: string, options: SerializeOptions): void {
  const existing = res.getHeader('Set-Cookie');
  const list = Array.isArray(existing) ? existing : existing === undefined ? [] : [String(existing)];
  res.setHeader('Set-Cookie', [...list, serialize(name, value, options)]);
}

/**
 * The client's address: the socket's, or with TRUST_PROXY the last `X-Forwarded-For` hop, the one our proxy
 * added; earlier hops are whatever the client sent, so trusting them would let it dodge the login rate limit.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = req.headers['x-forwarded-for'];
  if (trustProxy && typeof forwarded === 'string') return forwarded.split(',').pop()!.trim();
  return req.socket.remoteAddress ?? 'unknown';
}

/** A small form's body (the reset and unsubscribe pages): at most 4 KiB, else refused as too large. */
export async function smallBody(req: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 4096) throw new DomainError('PAYLOAD_TOO_LARGE', 'The form is larger than 4 KiB');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
