import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { contentDisposition, FILE_CSP } from '../core/transfer.js';
import type { CutArchive } from './service.js';

/**
 * Answers a GET or HEAD with a cut's ZIP: its exact length before the first byte, then the stored files
 * read one after the other into the response. No ranges (`Accept-Ranges: none`): the ZIP is written as it
 * is sent.
 */
export async function sendArchive(req: IncomingMessage, res: ServerResponse, archive: CutArchive): Promise<void> {
  res.writeHead(200, {
    'Content-Type': 'application/zip',
    'Content-Length': archive.zip.size,
    'Content-Disposition': contentDisposition('attachment', archive.downloadName),
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
    await pipeline(archive.zip.open(), res);
  } catch (error) {
    // A client that stops reading is not an error.
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw error;
  }
}
