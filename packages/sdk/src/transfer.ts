// What uploads and downloads share in both builds: multipart.ts and download.ts, and the `.web.ts` modules tsup
// swaps in for them, import it. It has no `.web.ts` sibling, so it must not import a node:* module.
import { localProblem } from './errors.js';
import { describeSize } from './types.js';

export interface Progress {
  loaded: number;
  /** Null when the size is not known in advance (a stream of unknown length). */
  total: number | null;
}

/** The file part of a multipart body; `Source` is each build's resolved file input. */
export interface MultipartFile<Source> {
  field: string;
  source: Source;
  filename: string;
  contentType?: string;
  onProgress?: (progress: Progress) => void;
}

/**
 * A file upload ready to be sent, checked and hashed once (upload.ts), as either sender takes it (multipart.ts,
 * resumable.ts); `Source` is each build's FileSource.
 */
export interface PreparedUpload<Source> {
  /** The upload's text fields (multipart fields, or tus Upload-Metadata), in the order the server reads them. */
  fields: { cutId?: string; versionOf?: string; name?: string; path?: string };
  source: Source;
  filename: string;
  /** The type's MIME type, from the file type table. */
  contentType: string;
  /** The file's sha256 (hex), sent as If-None-Match with versionOf: the latest version's makes the upload 412 UNCHANGED. */
  ifNoneMatch: string | undefined;
  onProgress?: (progress: Progress) => void;
}

/** Refuses, before sending a byte, what the server would refuse with 413 after reading it. */
export function checkSize(source: { size: number | null }, maxBytes: number, what: string): void {
  if (source.size !== null && source.size > maxBytes) {
    throw localProblem('FILE_TOO_LARGE', `${what} may be at most ${describeSize(maxBytes)}; this one is ${describeSize(source.size)}`);
  }
}
