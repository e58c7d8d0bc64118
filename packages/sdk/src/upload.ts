// A file upload, in both builds, in three steps: the input normalised and, with ifChanged, hashed
// (upload-source.ts), checked as the server would check it before a byte is sent (`prepare`), then sent by the
// protocol `protocolFor` picks once (resumable.ts): one multipart request (multipart.ts) or the server's
// resumable uploads. The web build's swaps (`.web.ts`) have no resumable uploads.
import type { WithResponse } from './band-promise.js';
import { ROUTES } from './contract/routes.js';
import { localProblem } from './errors.js';
import { multipartBody } from './multipart.js';
import { protocolFor, type ResumableOptions, sendResumable } from './resumable.js';
import { checkSize, type PreparedUpload, type Progress } from './transfer.js';
import { type RequestOptions, routeRequest, type Transport } from './transport.js';
import { checkFilePath, extensionOf, FILE_TYPE_PLURALS, FILE_TYPES, fileTypeFor, type FileRecord, type UploadFields } from './types.js';
import { type FileInput, type FileSource, fileSource, type IfChanged, sha256Of } from './upload-source.js';

/**
 * The upload's text fields (`cutId`, the display name `name`, `versionOf`, `path`), the file, and how to send it.
 * Give `cutId`, or `versionOf` (any file of a series: the upload becomes its next version, in that file's cut,
 * with its latest version's display name unless `name` is given), or both. `path` is the file's relative POSIX
 * path in the cut's folder (§16): unique among the cut's latest versions (else 409 PATH_TAKEN, unless
 * `versionOf` names its series); with `versionOf` another path renames the series, none keeps its path. With a
 * path, a file of an extension no type claims is a SESSION file. The Node build also uploads resumably
 * (ResumableOptions).
 */
export interface UploadInput extends UploadFields, ResumableOptions {
  file: FileInput;
  /**
   * With `versionOf`: reads the file's sha256 first (a path in Node, bytes or a Blob; a stream cannot be read twice)
   * and sends it as If-None-Match, so when the latest version has the same bytes nothing is uploaded and the
   * call rejects with a BandApiError of code UNCHANGED (412) whose `problem.fileId` is that latest version:
   * `isUnchanged(error)` tells it apart, and a CI step can report "unchanged" and succeed.
   * `{ sha256 }` gives the file's sha256 (hex) when the caller already took it: it is sent as it is, the file is
   * read only to upload it (and may then be a stream). A sha256 that is not the file's makes the answer wrong.
   * The web build takes only `{ sha256 }`.
   */
  ifChanged?: IfChanged;
  /** The file name sent to the server, whose extension decides the type. Required unless `file` is a path (Node) or a named File. */
  filename?: string;
  onProgress?: (progress: Progress) => void;
  signal?: AbortSignal;
}

/**
 * Sends a file upload by the protocol its size and options pick: either sender answers the File record (a
 * resumable upload the record as read once complete, with that read's response beside it).
 */
export async function sendUpload(transport: Transport, input: UploadInput, options?: RequestOptions): Promise<WithResponse<FileRecord>> {
  const upload = await prepare(input);
  if (protocolFor(upload.source, input) === 'tus') return sendResumable(transport, { ...input, ...upload }, options);
  const stream = await multipartBody(upload.fields, { field: 'file', ...upload });
  const request = routeRequest(ROUTES.uploadFile, { body: { stream } });
  const headers = upload.ifNoneMatch === undefined ? request.headers : { ...request.headers, 'if-none-match': `"${upload.ifNoneMatch}"` };
  return transport.json<FileRecord>({ ...request, headers, signal: input.signal }, options).withResponse();
}

/** The upload normalised, refused here for what the server would refuse before reading it, and hashed when it compares. */
async function prepare(input: UploadInput): Promise<PreparedUpload<FileSource>> {
  const source = await fileSource(input.file, input.filename);
  const { filename } = source;
  if (!filename) throw new TypeError('upload: `filename` is required when `file` is not a path or a named File');
  if (input.path !== undefined) {
    const checked = checkFilePath(input.path);
    if ('problem' in checked) throw localProblem('VALIDATION_FAILED', `path ${checked.problem}`);
  }
  // A version of a series that has a path is a SESSION file too, without giving the path again: the server knows.
  const rule = fileTypeFor(filename, { withPath: input.path !== undefined || input.versionOf !== undefined });
  if (!rule) {
    const accepted = Object.keys(FILE_TYPES).map((extension) => `.${extension}`).join(', ');
    throw localProblem('UNSUPPORTED_FILE_TYPE', `${filename}: accepted types are ${accepted} (any other with a path)`);
  }
  checkSize(source, rule.maxBytes, `${FILE_TYPE_PLURALS[rule.type]} (.${extensionOf(filename)})`);
  if (input.cutId === undefined && input.versionOf === undefined) throw new TypeError('upload: give `cutId` or `versionOf`');
  if (input.ifChanged && input.versionOf === undefined) throw new TypeError('upload: `ifChanged` compares with the latest version of `versionOf`: give it');
  const ifNoneMatch = typeof input.ifChanged === 'object' ? knownSha256(input.ifChanged.sha256) : input.ifChanged ? await sha256Of(source, input.signal) : undefined;
  return {
    // versionOf comes before the file part, so an unchanged upload is refused before its bytes are read.
    fields: { cutId: input.cutId, versionOf: input.versionOf, name: input.name, path: input.path },
    source,
    filename,
    contentType: rule.mimeType,
    ifNoneMatch,
    onProgress: input.onProgress,
  };
}

/** A sha256 the caller gave, checked to be one (it goes into a header), in the lower case the server answers with. */
function knownSha256(sha256: string): string {
  if (!/^[0-9a-f]{64}$/i.test(sha256)) throw new TypeError('upload: `ifChanged.sha256` is a sha256 in hex (64 characters)');
  return sha256.toLowerCase();
}
