import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { SESSION_FILE_TYPE } from '@bandcollab/sdk/contract';
import { encodeExtended } from 'content-disposition';
import fresh from 'fresh';
import parseRange from 'range-parser';
import { invalidField, notFound } from './errors.js';
import { sendProblem } from './http.js';
import { ResponseWriter } from './response-writer.js';
import { type BlobReader, type ByteRange, type DownloadHeaders, ObjectMissing } from './store/index.js';

/** Stored bytes and what their response headers say about them. */
export interface StoredBytes {
  /** Where the bytes are stored (core/store). */
  key: string;
  /** Opens them (bytes `start`–`end` of them); rejects with ObjectMissing when they are gone. */
  read: (range?: ByteRange) => Promise<Readable>;
  /** The same, read into buffers the caller lends (what responses send through, ResponseWriter). */
  openReader: (range?: ByteRange) => Promise<BlobReader>;
  size: number;
  mimeType: string;
  /** A strong validator, quoted: the sha256 for uploaded files. */
  etag: string;
  modifiedAt: Date;
  /** The name a browser saves the bytes under. */
  downloadName: string;
  /**
   * Where a GET may fetch the bytes instead, with these headers (S3_PRESIGNED_DOWNLOADS); null: the server
   * sends them. Files only: images and avatars are always sent by the server.
   */
  downloadUrl?: (headers: DownloadHeaders) => Promise<string | null>;
}

export type Disposition = 'inline' | 'attachment';

/** File responses are never rendered as a document of this origin. */
export const FILE_CSP = "default-src 'none'; sandbox";

/**
 * Answers a GET or HEAD for stored bytes: validators (ETag, Last-Modified; If-None-Match or
 * If-Modified-Since → 304), one byte range (206, or 416 when no range names a byte of the file; ranges that
 * stay several after merging get the whole file), and a streamed body.
 */
export async function sendStoredBytes(req: IncomingMessage, res: ServerResponse, bytes: StoredBytes, disposition: Disposition): Promise<void> {
  const lastModified = bytes.modifiedAt.toUTCString();
  // Bytes of no known kind (SESSION files, §16) are never shown in a page: an attachment, whatever was asked.
  const sentAs: Disposition = bytes.mimeType === SESSION_FILE_TYPE.mimeType ? 'attachment' : disposition;
  const headers: Record<string, string | number> = {
    'Content-Type': bytes.mimeType,
    'Content-Disposition': contentDisposition(sentAs, bytes.downloadName),
    ETag: bytes.etag,
    'Last-Modified': lastModified,
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'private, no-cache',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': FILE_CSP,
  };
  // jshttp's `fresh`: If-None-Match (weak comparison) decides over If-Modified-Since. It is not handed the
  // request's Cache-Control: it would answer `no-cache` with the bytes, and fetch() adds `no-cache` to every
  // request carrying a validator, so a client revalidating with fetch() would never get its 304.
  const conditions = { 'if-none-match': req.headers['if-none-match'], 'if-modified-since': req.headers['if-modified-since'] };
  if (fresh(conditions, { etag: bytes.etag, 'last-modified': lastModified })) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const range = rangeOf(req, bytes);
  if (range === 'unsatisfiable') {
    // 416 has no error code of its own: the body says what is wrong with the Range header, the status is HTTP's.
    const error = invalidField('Range', `names no byte of the file (${bytes.size} bytes)`);
    sendProblem(req, res, error, { status: 416, headers: { 'Content-Range': `bytes */${bytes.size}` } });
    return;
  }
  // Checked and counted by now: the store sends the bytes (the client re-sends its Range there). A HEAD is answered
  // here, as a URL signed for GET is refused for HEAD. Attachments only: a presigned answer cannot carry nosniff
  // or the sandbox CSP (S3 has no response override for them), so bytes a browser may render inline (players,
  // images) are sent by the server with both.
  const redirect =
    req.method === 'GET' && sentAs === 'attachment'
      ? await bytes.downloadUrl?.({ contentType: bytes.mimeType, contentDisposition: headers['Content-Disposition'] as string })
      : null;
  if (redirect) {
    res.writeHead(302, { Location: redirect, 'Cache-Control': 'private, no-store' });
    res.end();
    return;
  }
  const { start, end } = range ?? { start: 0, end: bytes.size - 1 };
  // Opened before the status is sent: a missing object is still a 404, an unreachable store a 503.
  const reader = req.method === 'HEAD' || bytes.size === 0 ? null : await openStored(bytes, { start, end });
  headers['Content-Length'] = end - start + 1;
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${bytes.size}`;
  res.writeHead(range ? 206 : 200, headers);
  if (reader === null) {
    res.end();
    return;
  }
  try {
    const writer = new ResponseWriter(res);
    await writer.copy(reader, end - start + 1);
    await writer.end();
  } catch (error) {
    // A client that stops reading (a seeking audio element does it all the time) ends the transfer quietly.
    if (!res.destroyed) throw error;
  } finally {
    await reader.close();
  }
}

/** A row whose bytes are gone (removed by hand, or a failed write) answers 404, not 500. */
async function openStored(bytes: StoredBytes, range: ByteRange): Promise<BlobReader> {
  try {
    return await bytes.openReader(range);
  } catch (error) {
    if (error instanceof ObjectMissing) throw notFound('File');
    throw error;
  }
}

/**
 * The byte range to send; null for the whole file: no Range, another unit, bad syntax, a stale If-Range, or
 * ranges that stay several after merging (RFC 9110 §14.2 lets a server ignore Range; a multipart/byteranges
 * body is something no audio element or download client asks for). 'unsatisfiable' when no range names a byte
 * of the file, a backwards one included (the RFC allows rejecting it; `send` does).
 */
export function rangeOf(req: IncomingMessage, bytes: StoredBytes): { start: number; end: number } | 'unsatisfiable' | null {
  const header = req.headers.range;
  if (!header) return null;
  const ifRange = req.headers['if-range'];
  if (ifRange && ifRange !== bytes.etag && ifRange !== bytes.modifiedAt.toUTCString()) return null;
  const ranges = parseRange(bytes.size, clampSuffixes(header, bytes.size), { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges.type.toLowerCase() !== 'bytes' || ranges.length !== 1) return null;
  return ranges[0]!;
}

/**
 * range-parser 1.3.0 drops a suffix longer than the file (`bytes=-5000` of 1000 bytes) as unsatisfiable,
 * where RFC 9110 §14.1.2 says it means the whole file (jshttp/range-parser#66 fixes it, not yet released):
 * such a suffix is handed to it as `0-`.
 */
function clampSuffixes(header: string, size: number): string {
  return header.replace(/([=,]\s*)-(\d+)/g, (spec, lead: string, length: string) => (Number(length) > size ? `${lead}0-` : spec));
}

/**
 * `filename` for old clients, quoted (content-disposition 2's `format` leaves a plain name unquoted, which
 * clients matching `filename="…"` miss): printable ASCII without quotes, backslashes or percent signs, which
 * some of them mangle. `filename*` (RFC 8187, UTF-8, encoded by content-disposition) with the real name. Both
 * always, as the API says.
 */
export function contentDisposition(disposition: Disposition, name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/gu, '_');
  return `${disposition}; filename="${fallback}"; filename*=${encodeExtended(name)}`;
}

/** An attachment made as it is sent (a cut archive, a marker export): its exact length is known first. */
export interface MadeAttachment {
  contentType: string;
  fileName: string;
  length: number;
  /** Writes the body, once, for a GET (the writer ends the response after it). */
  write: (writer: ResponseWriter) => Promise<void>;
}

/** Answers a GET or HEAD with a made attachment: no ranges (`Accept-Ranges: none`), the body written as it is made. */
export async function sendMadeAttachment(req: IncomingMessage, res: ServerResponse, attachment: MadeAttachment): Promise<void> {
  res.writeHead(200, {
    'Content-Type': attachment.contentType,
    'Content-Length': attachment.length,
    'Content-Disposition': contentDisposition('attachment', attachment.fileName),
    'Accept-Ranges': 'none',
    'Cache-Control': 'private, no-cache',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': FILE_CSP,
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  try {
    const writer = new ResponseWriter(res);
    await attachment.write(writer);
    await writer.end();
  } catch (error) {
    // A client that stops reading is not an error.
    if (!res.destroyed) throw error;
  }
}
