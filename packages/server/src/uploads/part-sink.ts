import { Readable, Writable } from 'node:stream';
import type { IHasher } from 'hash-wasm';
import { SIGNATURE_LENGTH } from '../core/file-types.js';
import type { BlobStore, UploadedPart } from '../core/store/index.js';
import type { Progress, UploadRow } from './repository.js';

/**
 * The end of a resumable upload's PATCH: takes the bytes that passed the upload rules into the store's
 * multipart upload, in parts of the store's part size, and keeps what is shorter than a part as the tail.
 * It hashes exactly the bytes it took (hash-wasm, whose state is saved in PostgreSQL), so `progress` always
 * describes bytes it holds. Parts written here are recorded only by the caller's `advance`: a PATCH whose
 * bytes are refused (checksum) leaves parts past the recorded ones, which the next parts overwrite.
 */
export class PartSink extends Writable {
  private readonly parts: UploadedPart[];
  private tail: Buffer[];
  private tailBytes: number;
  private head: Buffer;
  private multipartId: string | null;
  /** A part upload in progress: a failed pipeline does not wait for it, so the caller does (`settled`). */
  private writing: Promise<void> = Promise.resolve();
  /** The store failed: what this PATCH sent cannot be recorded. */
  storeFailure: unknown = null;

  constructor(
    private readonly store: BlobStore,
    private readonly key: string,
    upload: UploadRow,
    private readonly hasher: IHasher,
    /** Begins the multipart upload and records it, before its first part is written. */
    private readonly startMultipart: () => Promise<string>,
  ) {
    super();
    this.parts = [...upload.parts];
    this.tail = [upload.tail];
    this.tailBytes = upload.tail.length;
    this.head = upload.head;
    this.multipartId = upload.multipartId;
  }

  /** The bytes of the file held so far: its parts and tail. */
  get position(): number {
    return this.parts.length * this.store.partSize + this.tailBytes;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.hasher.update(chunk);
    if (this.head.length < SIGNATURE_LENGTH) this.head = Buffer.concat([this.head, chunk.subarray(0, SIGNATURE_LENGTH - this.head.length)]);
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    if (this.tailBytes < this.store.partSize) return callback();
    this.writing = this.writeParts();
    this.writing.then(() => callback(), (error: Error) => callback(error));
  }

  /** Once the pipeline ended (or failed): no part upload runs any more. */
  async settled(): Promise<void> {
    await this.writing.catch(() => undefined);
  }

  /** What the caller records: the offset, the parts, the tail, the leading bytes and the hash state. */
  progress(): Progress {
    return { received: this.position, parts: this.parts, tail: Buffer.concat(this.tail, this.tailBytes), head: this.head, hashState: Buffer.from(this.hasher.save()) };
  }

  /** The sha256 of every byte taken, once the last has arrived. */
  sha256(): string {
    return this.hasher.digest('hex');
  }

  /** Once every byte has arrived and is recorded: makes the object (a single put when it never filled a part). */
  async completeObject(): Promise<void> {
    const tail = Buffer.concat(this.tail, this.tailBytes);
    if (this.multipartId === null) {
      await this.store.write(this.key, Readable.from(tail.length > 0 ? [tail] : []));
      return;
    }
    const parts = tail.length > 0 ? [...this.parts, await this.store.writePart(this.key, this.multipartId, this.parts.length + 1, tail)] : this.parts;
    await this.store.completeMultipart(this.key, this.multipartId, parts);
  }

  private async writeParts(): Promise<void> {
    try {
      while (this.tailBytes >= this.store.partSize) {
        const all = Buffer.concat(this.tail, this.tailBytes);
        this.multipartId ??= await this.startMultipart();
        this.parts.push(await this.store.writePart(this.key, this.multipartId, this.parts.length + 1, all.subarray(0, this.store.partSize)));
        this.tail = [all.subarray(this.store.partSize)];
        this.tailBytes = all.length - this.store.partSize;
      }
    } catch (error) {
      this.storeFailure = error;
      throw error;
    }
  }
}
