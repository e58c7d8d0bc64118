import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { invalidField, notFound } from './errors.js';
import { sendProblem } from './http.js';

/** Stored bytes and what their response headers say about them. */
export interface StoredBytes {
  path: string;
  size: number;
  mimeType: string;
  /** A strong validator, quoted: the sha256 for uploaded files. */
  etag: string;
  modifiedAt: Date;
  /** The name a browser saves the bytes under. */
  downloadName: string;
}

export type Disposition = 'inline' | 'attachment';

/** File responses are never rendered as a document of this origin. */
export const FILE_CSP = "default-src 'none'; sandbox";

/**
 * Answers a GET or HEAD for stored bytes: validators (ETag, Last-Modified, If-None-Match → 304), one byte
 * range (206, or 416 when it lies outside the file; several ranges get the whole file), and a streamed body.
 */
export async function sendStoredBytes(req: IncomingMessage, res: ServerResponse, bytes: StoredBytes, disposition: Disposition): Promise<void> {
  const headers: Record<string, string | number> = {
    'Content-Type': bytes.mimeType,
    'Content-Disposition': contentDisposition(disposition, bytes.downloadName),
    ETag: bytes.etag,
    'Last-Modified': bytes.modifiedAt.toUTCString(),
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'private, no-cache',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': FILE_CSP,
  };
  if (matchesEtag(req.headers['if-none-match'], bytes.etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const range = rangeOf(req, bytes);
  if (range === 'unsatisfiable') {
    // 416 has no error code of its own: the body says what is wrong with the Range header, the status is HTTP's.
    const error = invalidField('Range', `lies outside the file (${bytes.size} bytes)`);
    sendProblem(req, res, error, { status: 416, headers: { 'Content-Range': `bytes */${bytes.size}` } });
    return;
  }
  const handle = await openStored(bytes.path);
  const { start, end } = range ?? { start: 0, end: bytes.size - 1 };
  headers['Content-Length'] = end - start + 1;
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${bytes.size}`;
  res.writeHead(range ? 206 : 200, headers);
  if (req.method === 'HEAD') {
    await handle.close();
    res.end();
    return;
  }
  try {
    await pipeline(handle.createReadStream({ start, end }), res);
  } catch (error) {
    // A client that stops reading (a seeking audio element does it all the time) is not an error.
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw error;
  }
}

/** A row whose bytes are gone (removed by hand, or a failed write) answers 404, not 500. */
async function openStored(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound('File');
    throw error;
  }
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

/**
 * The single byte range the request asks for, null for the whole file (no Range, a stale If-Range, a
 * syntax this server does not serve, several ranges), or 'unsatisfiable'.
 */
export function rangeOf(req: IncomingMessage, bytes: StoredBytes): { start: number; end: number } | 'unsatisfiable' | null {
  const header = req.headers.range;
  if (!header) return null;
  const ifRange = req.headers['if-range'];
  if (ifRange && ifRange !== bytes.etag && ifRange !== bytes.modifiedAt.toUTCString()) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  const last = bytes.size - 1;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    return suffix === 0 ? 'unsatisfiable' : { start: Math.max(0, bytes.size - suffix), end: last };
  }
  const start = Number(match[1]);
  if (start > last) return 'unsatisfiable';
  const end = match[2] === '' ? last : Number(match[2]);
  if (end < start) return null;
  return { start, end: Math.min(end, last) };
}

/** `filename` for old clients (ASCII only), `filename*` (RFC 5987, UTF-8) with the real name. */
export function contentDisposition(disposition: Disposition, name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${disposition}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
