import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendMadeAttachment } from '../core/transfer.js';
import type { CutArchive } from './service.js';

/**
 * Answers a GET or HEAD with a cut's ZIP: its exact length before the first byte, then the stored files
 * read one after the other into the response. No ranges (`Accept-Ranges: none`): the ZIP is written as it
 * is sent.
 */
export function sendArchive(req: IncomingMessage, res: ServerResponse, archive: CutArchive): Promise<void> {
  return sendMadeAttachment(req, res, { contentType: 'application/zip', fileName: archive.downloadName, length: archive.zip.size, write: (writer) => archive.zip.write(writer) });
}
