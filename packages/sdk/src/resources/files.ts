import { BandPromise, type WithResponse } from '../band-promise.js';
import { type FileInput, fileSource, type IfChanged, multipartBody, sha256Of } from '../multipart.js';
import { checkSize, type Progress } from '../transfer.js';
import { cancelUpload, type ResumableOptions, uploadIfResumable } from '../resumable.js';
import { download, type DownloadOptions, type DownloadResult } from '../download.js';
import { abortedOr, localProblem } from '../errors.js';
import { sleep } from '../sleep.js';
import { pathOf } from '../contract/route-types.js';
import { ROUTES } from '../contract/routes.js';
import { joinedSignal, type RequestOptions, routeRequest, type Transport } from '../transport.js';
import {
  checkFilePath,
  extensionOf,
  FILE_TYPE_PLURALS,
  FILE_TYPES,
  fileTypeFor,
  type Deleted,
  type DeletedSeries,
  type FileRecord,
  type FileVersions,
  type RevokeSharesResult,
  type ShareLink,
  type ShareRequest,
  type StemEntriesPage,
  type StorageStats,
  type UploadFields,
  type Waveform,
} from '../types.js';

/** waitForAnalysis asks again after this, doubling up to the most. */
const ANALYSIS_POLL_MS = { first: 250, most: 2000 };

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

export class FilesResource {
  constructor(private readonly transport: Transport) {}

  /**
   * Streams a file to a cut. The type and its size limit are checked before a byte is sent. It carries an
   * Idempotency-Key, so after a lost answer or a refused attempt it is sent again, reading the bytes afresh, and
   * stored once: a path (Node), bytes or a Blob always; a stream only if none of it was read (else the error surfaces).
   * With a resumable upload, the response beside the record (withResponse) is that of reading the new file.
   */
  upload(input: UploadInput, options?: RequestOptions): BandPromise<FileRecord> {
    return BandPromise.from(() => this.uploaded(input, options));
  }

  private async uploaded(input: UploadInput, options?: RequestOptions): Promise<WithResponse<FileRecord>> {
    const source = await fileSource(input.file, input.filename);
    if (!source.filename) throw new TypeError('upload: `filename` is required when `file` is not a path or a named File');
    if (input.path !== undefined) {
      const checked = checkFilePath(input.path);
      if ('problem' in checked) throw localProblem('VALIDATION_FAILED', `path ${checked.problem}`);
    }
    // A version of a series that has a path is a SESSION file too, without giving the path again: the server knows.
    const rule = fileTypeFor(source.filename, { withPath: input.path !== undefined || input.versionOf !== undefined });
    if (!rule) {
      const accepted = Object.keys(FILE_TYPES).map((extension) => `.${extension}`).join(', ');
      throw localProblem('UNSUPPORTED_FILE_TYPE', `${source.filename}: accepted types are ${accepted} (any other with a path)`);
    }
    checkSize(source, rule.maxBytes, `${FILE_TYPE_PLURALS[rule.type]} (.${extensionOf(source.filename)})`);
    if (input.cutId === undefined && input.versionOf === undefined) throw new TypeError('upload: give `cutId` or `versionOf`');
    if (input.ifChanged && input.versionOf === undefined) throw new TypeError('upload: `ifChanged` compares with the latest version of `versionOf`: give it');
    const ifNoneMatch = typeof input.ifChanged === 'object' ? knownSha256(input.ifChanged.sha256) : input.ifChanged ? await sha256Of(source, input.signal) : undefined;
    const signal = joinedSignal(input.signal, options?.signal);
    const fileId = await uploadIfResumable(this.transport, { ...input, ifNoneMatch, source, filename: source.filename }, { ...options, signal });
    if (fileId !== undefined) return this.get(fileId, { ...options, signal }).withResponse();
    const stream = await multipartBody(
      // versionOf comes before the file part, so an unchanged upload is refused before its bytes are read.
      { cutId: input.cutId, versionOf: input.versionOf, name: input.name, path: input.path },
      { field: 'file', source, filename: source.filename, contentType: rule.mimeType, onProgress: input.onProgress },
    );
    const request = routeRequest(ROUTES.uploadFile, { body: { stream } });
    const headers = ifNoneMatch === undefined ? request.headers : { ...request.headers, 'if-none-match': `"${ifNoneMatch}"` };
    return this.transport.json<FileRecord>({ ...request, headers, signal: input.signal }, options).withResponse();
  }

  /** Terminates a resumable upload an earlier run left (its URL, as a ResumeStore keeps it): the server drops its bytes. */
  cancelUpload(url: string, options?: RequestOptions): Promise<void> {
    return cancelUpload(this.transport, url, options);
  }

  /** Every remaining version of the file's series (any version names it), oldest first. */
  versions(id: string, options?: RequestOptions): BandPromise<FileVersions> {
    return this.transport.call(ROUTES.fileVersions, { params: { id } }, options);
  }

  get(id: string, options?: RequestOptions): BandPromise<FileRecord> {
    return this.transport.call(ROUTES.getFile, { params: { id } }, options);
  }

  /**
   * The file once its background analysis ran (`analysis` is then done, failed or unsupported). Asks the
   * server again with growing pauses; `options.signal` ends the wait (a BandAbortError whose `cause` is the signal's reason).
   */
  waitForAnalysis(id: string, options?: RequestOptions): BandPromise<FileRecord> {
    return BandPromise.from(async () => {
      let pauseMs = ANALYSIS_POLL_MS.first;
      for (;;) {
        const answer = await this.get(id, options).withResponse();
        if (answer.data.analysis !== 'pending') return answer;
        await sleep(pauseMs, options?.signal).catch((error: unknown) => Promise.reject(abortedOr(error, options?.signal)));
        pauseMs = Math.min(pauseMs * 2, ANALYSIS_POLL_MS.most);
      }
    });
  }

  /** A CUT's waveform (waveform-data v2); 409 ANALYSIS_PENDING until analysed, 404 when it has none. */
  peaks(id: string, options?: RequestOptions): BandPromise<Waveform> {
    return this.transport.call(ROUTES.filePeaks, { params: { id } }, options);
  }

  /**
   * One page of a STEM ZIP's entries (the File record lists only the first 100): pass the page's `nextCursor`
   * as `cursor` for the next; 409 ANALYSIS_PENDING until analysed, 404 when it has none.
   */
  entries(id: string, page: { cursor?: string; limit?: number } = {}, options?: RequestOptions): BandPromise<StemEntriesPage> {
    return this.transport.call(ROUTES.stemEntries, { params: { id }, query: page }, options);
  }

  /** Saves the file's bytes to a path (Node) or a stream; resumes with a Range request if the connection breaks. */
  download(id: string, target: DownloadOptions, options?: RequestOptions): Promise<DownloadResult> {
    return download(this.transport, { path: pathOf(ROUTES.downloadFile, { id }) }, target, options);
  }

  /**
   * Saves a CUT's listening preview (AAC in MP4, §20) to a path (Node) or a stream; resumes with a Range request
   * if the connection breaks. 409 PREVIEW_NOT_READY until made (File.preview.status), 404 when it has none.
   */
  downloadPreview(id: string, target: DownloadOptions, options?: RequestOptions): Promise<DownloadResult> {
    return download(this.transport, { path: pathOf(ROUTES.filePreview, { id }) }, target, options);
  }

  /**
   * Saves the listening preview of a STEM ZIP's entry (`index` in the ZIP's entry list: StemEntry.preview,
   * made with the server's PREVIEW_STEMS=true), as downloadPreview does a CUT's. 409 PREVIEW_NOT_READY until
   * made, 404 when the entry has none.
   */
  downloadEntryPreview(id: string, index: number, target: DownloadOptions, options?: RequestOptions): Promise<DownloadResult> {
    return download(this.transport, { path: pathOf(ROUTES.stemEntryPreview, { id, index: String(index) }) }, target, options);
  }

  /** The file's bytes as a Web stream, unread (a browser hands it to a Response, a Service Worker, a file handle). */
  async stream(id: string, options?: RequestOptions): Promise<ReadableStream<Uint8Array>> {
    return (await this.transport.open(ROUTES.downloadFile, { params: { id } }, { ...options, headers: { accept: '*/*', ...options?.headers } })).body.stream();
  }

  /**
   * Makes a new public link; `expiresIn` in seconds (60 to 31,536,000), none for a link that does not expire.
   * With `reuse: true`, the link an earlier `share` with `reuse` made (same options, still live) comes back instead.
   */
  share(id: string, request: ShareRequest = {}, options?: RequestOptions): BandPromise<ShareLink> {
    return this.transport.call(ROUTES.shareFile, { params: { id }, json: request }, options);
  }

  /** Revokes every public link of the file. */
  unshare(id: string, options?: RequestOptions): BandPromise<RevokeSharesResult> {
    return this.transport.call(ROUTES.unshareFile, { params: { id } }, options);
  }

  /** The caller's storage use (and the whole site's, for a site ADMIN). */
  storage(options?: RequestOptions): BandPromise<StorageStats> {
    return this.transport.call(ROUTES.storageStats, {}, options);
  }

  /** Deletes this version (its uploader or a project ADMIN); the other versions of its series stay. */
  delete(id: string, options?: RequestOptions): BandPromise<Deleted> {
    return this.transport.call(ROUTES.deleteFile, { params: { id } }, options) as BandPromise<Deleted>;
  }

  /** Deletes every version of the file's series: a project ADMIN, or a member who uploaded every version. */
  deleteSeries(id: string, options?: RequestOptions): BandPromise<DeletedSeries> {
    return this.transport.call(ROUTES.deleteFile, { params: { id }, query: { series: 'all' } }, options) as BandPromise<DeletedSeries>;
  }
}

/** A sha256 the caller gave, checked to be one (it goes into a header), in the lower case the server answers with. */
function knownSha256(sha256: string): string {
  if (!/^[0-9a-f]{64}$/i.test(sha256)) throw new TypeError('upload: `ifChanged.sha256` is a sha256 in hex (64 characters)');
  return sha256.toLowerCase();
}
