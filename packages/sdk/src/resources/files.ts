import { BandPromise } from '../band-promise.js';
import { cancelUpload } from '../resumable.js';
import { download, type DownloadOptions, type DownloadResult } from '../download.js';
import { abortedOr } from '../errors.js';
import { sleep } from '../sleep.js';
import { pathOf } from '../contract/route-types.js';
import { ROUTES } from '../contract/routes.js';
import { type PagedList, pagedList } from '../paging.js';
import type { RequestOptions, Transport } from '../transport.js';
import { sendUpload, type UploadInput } from '../upload.js';
import {
  type Deleted,
  type DeletedSeries,
  type FileRecord,
  type FileVersions,
  type RevokeSharesResult,
  type ShareLink,
  type ShareRequest,
  type StemEntriesPage,
  type StemEntry,
  type StorageStats,
  type Waveform,
} from '../types.js';

/** waitForAnalysis asks again after this, doubling up to the most. */
const ANALYSIS_POLL_MS = { first: 250, most: 2000 };

export class FilesResource {
  constructor(private readonly transport: Transport) {}

  /**
   * Streams a file to a cut. The type and its size limit are checked before a byte is sent. It carries an
   * Idempotency-Key, so after a lost answer or a refused attempt it is sent again, reading the bytes afresh, and
   * stored once: a path (Node), bytes or a Blob always; a stream only if none of it was read (else the error surfaces).
   * With a resumable upload, the response beside the record (withResponse) is that of reading the new file.
   */
  upload(input: UploadInput, options?: RequestOptions): BandPromise<FileRecord> {
    return BandPromise.from(() => sendUpload(this.transport, input, options));
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

  /** Every entry of a STEM ZIP: iterate it, each page (`limit` entries, default 500) fetched as iteration reaches it. */
  listEntries(id: string, page: { limit?: number } = {}, options?: RequestOptions): PagedList<StemEntry, StemEntriesPage> {
    return pagedList((cursor) => this.entries(id, { ...page, cursor }, options), (answer) => answer.entries);
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
