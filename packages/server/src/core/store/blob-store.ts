import type { Readable } from 'node:stream';
import { unavailable } from '../errors.js';

/** Bytes `start` to `end` of an object, both included (HTTP's Range arithmetic). */
export interface ByteRange {
  start: number;
  end: number;
}

/** What a download's response says about its bytes, whoever sends them. */
export interface DownloadHeaders {
  contentType: string;
  contentDisposition: string;
}

/** Reads an object's bytes in order into buffers its caller lends, as FileHandle.read does. */
export interface BlobReader {
  /** Fills `buffer` from its start with the next bytes, at most its length; answers how many, 0 once all are read. */
  read(buffer: Buffer): Promise<number>;
  /** Lets the object go (a descriptor, a response body); call once, whether all was read or not. */
  close(): Promise<void>;
}

/** An object as a listing names it. */
export interface ListedObject {
  key: string;
  size: number;
  modifiedAt: Date;
}

/** A part of a multipart upload, as completing it names it. */
export interface UploadedPart {
  partNumber: number;
  etag: string;
}

/**
 * Where every stored byte lives (files, images, avatars): the local directory (FsBlobStore) or an
 * S3-compatible bucket (S3BlobStore). Keys are immutable and derived from ids (storeKeys), never from names.
 * No code outside the drivers opens stored bytes by path.
 */
export interface BlobStore {
  readonly kind: 'fs' | 's3';
  /**
   * Every part of a multipart upload but the last has exactly this size (R2 requires equal parts, S3 at
   * least 5 MiB).
   */
  readonly partSize: number;
  /**
   * Streams `body` into a new object: it appears whole at its key once this resolves, or not at all (a
   * failure aborts what was written). `key` may be given late: it is asked for once the first bytes must
   * be placed, after the leading bytes that type a file have arrived, and is awaited before the object can
   * appear (the caller enters it on the pending_objects ledger then).
   */
  write(key: string | (() => string | Promise<string>), body: Readable): Promise<{ key: string; size: number }>;
  /** The object's bytes (or a range of them); rejects with ObjectMissing when there is no such object. */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /**
   * The same bytes read into buffers the caller lends (a download's or an archive's few reused buffers,
   * core/transfer.ts): a stream makes a new buffer per chunk, which only a garbage collection gives back.
   * Rejects with ObjectMissing when there is no such object.
   */
  openReader(key: string, range?: ByteRange): Promise<BlobReader>;
  /** The object's size, or null when there is none. */
  head(key: string): Promise<{ size: number; modifiedAt: Date } | null>;
  /**
   * A URL a client GETs the object's bytes from, answered with these headers, for at most 300 s; null when
   * the server sends the bytes itself (the local directory, or S3_PRESIGNED_DOWNLOADS off).
   */
  downloadUrl(key: string, headers: DownloadHeaders): Promise<string | null>;
  /** Removes the object; nothing to remove is no error. */
  delete(key: string): Promise<void>;
  /**
   * The objects whose keys begin with `prefix` (`files/`, `images/`, `previews/`, the same under `orphans/`), page
   * by page as the store answers: only the `orphans` command lists (the server finds objects by their rows).
   */
  list(prefix: string): AsyncIterable<ListedObject>;
  /** Moves the object to `to`, replacing what is there (the `orphans --move` command). */
  move(from: string, to: string): Promise<void>;

  /** Begins a multipart upload into `key` (a resumable upload's); answers its id. */
  startMultipart(key: string): Promise<string>;
  /** Stores part `partNumber` (from 1) of the upload, which begins at byte `(partNumber - 1) * partSize`. */
  writePart(key: string, uploadId: string, partNumber: number, bytes: Buffer): Promise<UploadedPart>;
  /** Makes the object of the upload's parts, in order. */
  completeMultipart(key: string, uploadId: string, parts: UploadedPart[]): Promise<void>;
  /** Drops an incomplete multipart upload and its parts; an unknown one is no error. */
  abortMultipart(key: string, uploadId: string): Promise<void>;
}

/** A key that names no object: the row's bytes are gone (removed by hand, a failed write). */
export class ObjectMissing extends Error {
  constructor(readonly key: string) {
    super(`no stored object ${key}`);
  }
}

/** The store is unreachable or busy: 503 UNAVAILABLE with Retry-After, never 500. */
export const storeUnavailable = (): ReturnType<typeof unavailable> => unavailable('The file store is unavailable right now; try again shortly', 5);

/** The keys of stored bytes: one place that derives them from ids. */
export const storeKeys = {
  /** Where `orphans --move` puts an object no row refers to, under its own key (`orphans/files/<id>.<ext>`). */
  orphan: (key: string): string => `orphans/${key}`,
  /** `extension` comes from the FILE_TYPES table (fixed at upload), never from a client. */
  file: (id: string, extension: string): string => `files/${id}.${extension}`,
  /** A file's listening preview (§20), beside its original; it goes with the file. */
  preview: (fileId: string): string => `previews/${fileId}.m4a`,
  /**
   * The preview of a STEM ZIP's audio entry (§20, PREVIEW_STEMS), `position` its index in the ZIP's entry list
   * (stem_entries.position): flat beside the file's own, so every driver, the orphan scan and backups list it
   * as they list `previews/`; it goes with the file.
   */
  entryPreview: (fileId: string, position: number): string => `previews/${fileId}.${position}.m4a`,
  /** `name` is a stored image name (`<uuid>.<ext>`), never a client's. */
  image: (name: string): string => `images/${name.slice(name.lastIndexOf('/') + 1)}`,
};
