import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  paginateListObjectsV2,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { DomainError } from '../errors.js';
import { type BlobReader, type BlobStore, type ByteRange, type DownloadHeaders, type ListedObject, ObjectMissing, storeUnavailable, type UploadedPart } from './blob-store.js';
import { type DispatchedGet, dispatchGet } from './dispatch-reader.js';

export interface S3Settings {
  bucket: string;
  region: string;
  endpoint: string | null;
  forcePathStyle: boolean;
  /** Put before every key (`tenant-a/`): several servers may share one bucket. */
  prefix: string;
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  partSizeBytes: number;
  /** `when_required` (every S3-compatible store accepts it) or `when_supported` (AWS's default). */
  checksums: 'when_required' | 'when_supported';
  /** Downloads answered 302 to a presigned GET (downloadUrl) instead of through the server. */
  presignedDownloads: boolean;
}

/** A presigned download's lifetime: long enough to start it, short enough that a leaked URL soon dies (S3 checks it at the request's start only). */
const PRESIGNED_SECONDS = 300;

/** Requests that fail for the store's reasons (network, 500, 503 SlowDown) are tried this often in all, with backoff (the SDK's standard strategy). */
const MAX_ATTEMPTS = 3;

/** The SDK's standard backoff: a random wait up to this times 2^attempt before a retry. */
const RETRY_BASE_MS = 100;

/**
 * An S3-compatible bucket (AWS, R2, B2, MinIO, Garage, fauxqs in the tests). A write streams through parts of
 * `partSizeBytes` (every part but the last that size), filled into two buffers of a part each, allocated once
 * per write: one part uploads while the other buffer fills, so a write holds two parts however long it is, and
 * no byte is copied but once, into its part. A body that fits one part is one PutObject, a longer one a
 * multipart upload that is aborted on any failure, so no half-written object and no billed orphan parts stay
 * behind. Parts are buffers, so the SDK's retries resend them safely. Since 3.729 the SDK adds CRC32 checksums by default, which stores the aws-chunked framing as
 * content on several non-AWS stores: `when_required` turns that off (STACK.md).
 */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3';
  readonly partSize: number;
  private readonly client: S3Client;
  private readonly bucket: string;
  /** Where the bucket is, for messages: the endpoint, or AWS and its region. */
  private readonly endpointName: string;
  private readonly prefix: string;
  private readonly presignedDownloads: boolean;
  /** Keeps the connections of openReader's GETs (one pool per origin: the endpoint, or the bucket's AWS host). */
  private readonly objectReads = new Agent({ keepAliveTimeout: 30_000 });

  constructor(settings: S3Settings) {
    const checksums = settings.checksums === 'when_required' ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED';
    this.client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.forcePathStyle,
      ...(settings.credentials ? { credentials: settings.credentials } : {}),
      requestChecksumCalculation: checksums,
      responseChecksumValidation: checksums,
      maxAttempts: MAX_ATTEMPTS,
    });
    this.bucket = settings.bucket;
    this.endpointName = settings.endpoint ?? `AWS S3 (${settings.region})`;
    this.prefix = settings.prefix;
    this.partSize = settings.partSizeBytes;
    this.presignedDownloads = settings.presignedDownloads;
  }

  /** At start-up: rejects with one line saying why the bucket cannot be reached. */
  async verify(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      // HeadBucket has no body: a missing bucket is a bare 404 (NotFound), which says what to fix.
      if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404) {
        throw new Error(`no such bucket: ${this.bucket} at ${this.endpointName} (create it, or set S3_BUCKET to one that exists)`);
      }
      const status = error instanceof S3ServiceException ? ` (HTTP ${error.$metadata.httpStatusCode ?? '?'} ${error.name})` : ` (${(error as Error).message})`;
      throw new Error(`the S3 bucket ${this.bucket} cannot be reached${status}`);
    }
  }

  async write(key: string | (() => string | Promise<string>), body: Readable): Promise<{ key: string; size: number }> {
    let resolved: string | null = typeof key === 'string' ? key : null;
    const keyNow = async (): Promise<string> => (resolved ??= await (key as () => string | Promise<string>)());
    let uploadId: string | null = null;
    const parts: UploadedPart[] = [];
    // Two part buffers taking turns: one fills while the other's part uploads. A buffer is filled again only
    // once its part's upload, the SDK's retries included (which resend the same bytes), has settled.
    const buffers: Buffer[] = [];
    let filling = 0;
    let filled = 0;
    let size = 0;
    let uploading: Promise<void> = Promise.resolve();
    const bufferToFill = (): Buffer => (buffers[filling] ??= Buffer.allocUnsafe(this.partSize));
    const flush = async (bytes: Buffer): Promise<void> => {
      await uploading;
      uploadId ??= await this.startMultipart(await keyNow());
      const partNumber = parts.length + 1;
      const id = uploadId;
      parts.push({ partNumber, etag: '' });
      uploading = this.writePart(resolved!, id, partNumber, bytes).then((part) => {
        parts[partNumber - 1] = part;
      });
      // Rejections are awaited at the next flush or at the end; until then they must not count as unhandled.
      uploading.catch(() => undefined);
    };
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        size += chunk.length;
        for (let at = 0; at < chunk.length; ) {
          if (filled === this.partSize) {
            // More bytes than a part: waits for the other buffer's part, hands this one over, fills the other.
            await flush(buffers[filling]!);
            filling = 1 - filling;
            filled = 0;
          }
          const copied = chunk.copy(bufferToFill(), filled, at);
          filled += copied;
          at += copied;
        }
      }
      const rest = filled > 0 ? buffers[filling]!.subarray(0, filled) : Buffer.alloc(0);
      if (uploadId === null) {
        const whole = this.full(await keyNow());
        await this.send(() => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: whole, Body: rest, ContentLength: rest.length })));
      } else {
        if (rest.length > 0) await flush(rest);
        await uploading;
        await this.completeMultipart(resolved!, uploadId, parts);
      }
      return { key: resolved!, size };
    } catch (error) {
      await uploading.catch(() => undefined);
      if (uploadId !== null) await this.abortMultipart(resolved!, uploadId).catch(() => undefined);
      throw error;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const answer = await this.send(
      () => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.full(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) })),
      key,
    );
    return answer.Body as Readable;
  }

  /**
   * A plain GET of a presigned URL (signed locally, no request) over a pooled undici client, not GetObject:
   * through the SDK's body (its handler on node:http) a proxied 500 MiB download ran at 0.41x of GetObject read
   * directly, through undici at 0.58–0.66x, 0.87x of a bare undici proxy (bench/s3.bench.mjs,
   * docs/benchmarks.md). Missing objects and a store that is unreachable or failing answer as GetObject's do
   * (ObjectMissing; 503 after the same number of tries); other refusals as the S3ServiceException of its code.
   * `read` (a stream, for analysis and previews) stays on GetObject.
   */
  async openReader(key: string, range?: ByteRange): Promise<BlobReader> {
    const url = await getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: this.full(key) }), { expiresIn: PRESIGNED_SECONDS });
    const headers: Record<string, string> = range ? { range: `bytes=${range.start}-${range.end}` } : {};
    for (let attempt = 1; ; attempt += 1) {
      let answer: DispatchedGet;
      try {
        answer = await dispatchGet(this.objectReads, new URL(url), headers);
      } catch {
        // No answer at all: refused, reset, timed out.
        if (attempt < MAX_ATTEMPTS) {
          await sleep(Math.random() * RETRY_BASE_MS * 2 ** attempt);
          continue;
        }
        throw storeUnavailable();
      }
      if ('reader' in answer) return answer.reader;
      const { statusCode, text } = answer;
      const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1] ?? `HTTP ${statusCode}`;
      if (statusCode === 404 || code === 'NoSuchKey') throw new ObjectMissing(key);
      if (statusCode >= 500 || code === 'SlowDown') {
        if (attempt < MAX_ATTEMPTS) {
          await sleep(Math.random() * RETRY_BASE_MS * 2 ** attempt);
          continue;
        }
        throw storeUnavailable();
      }
      // What GetObject throws for the rest (403 AccessDenied, 416 InvalidRange): the store's error, by its code.
      const message = /<Message>([^<]+)<\/Message>/.exec(text)?.[1] ?? code;
      throw new S3ServiceException({ name: code, $fault: 'client', $metadata: { httpStatusCode: statusCode }, message });
    }
  }

  async head(key: string): Promise<{ size: number; modifiedAt: Date } | null> {
    try {
      const answer = await this.send(() => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.full(key) })), key);
      return { size: answer.ContentLength ?? 0, modifiedAt: answer.LastModified ?? new Date(0) };
    } catch (error) {
      if (error instanceof ObjectMissing) return null;
      throw error;
    }
  }

  async downloadUrl(key: string, headers: DownloadHeaders): Promise<string | null> {
    if (!this.presignedDownloads) return null;
    // Signed locally (no request): the response-* overrides are part of the signature, so the store answers with the server's headers.
    const request = new GetObjectCommand({
      Bucket: this.bucket,
      Key: this.full(key),
      ResponseContentType: headers.contentType,
      ResponseContentDisposition: headers.contentDisposition,
    });
    return getSignedUrl(this.client, request, { expiresIn: PRESIGNED_SECONDS });
  }

  async delete(key: string): Promise<void> {
    await this.send(() => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.full(key) })));
  }

  /** ListObjectsV2 under S3_PREFIX, following its continuation tokens (1,000 keys a page); keys without the prefix. */
  async *list(prefix: string): AsyncIterable<ListedObject> {
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket, Prefix: this.full(prefix) })) {
      for (const object of page.Contents ?? []) {
        yield { key: object.Key!.slice(this.prefix.length), size: object.Size ?? 0, modifiedAt: object.LastModified ?? new Date(0) };
      }
    }
  }

  /**
   * CopyObject, then DeleteObject (S3 has no rename): an interruption between them leaves the object at both
   * keys, never at neither. One CopyObject copies up to 5 GiB, more than any upload may be (MAX_UPLOAD_BYTES);
   * a larger object copied in by hand fails with the store's error.
   */
  async move(from: string, to: string): Promise<void> {
    const source = `${this.bucket}/${this.full(from)}`.split('/').map(encodeURIComponent).join('/');
    await this.send(() => this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.full(to), CopySource: source })), from);
    await this.delete(from);
  }

  async startMultipart(key: string): Promise<string> {
    const answer = await this.send(() => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: this.full(key) })));
    return answer.UploadId!;
  }

  async writePart(key: string, uploadId: string, partNumber: number, bytes: Buffer): Promise<UploadedPart> {
    const answer = await this.send(() =>
      this.client.send(
        new UploadPartCommand({ Bucket: this.bucket, Key: this.full(key), UploadId: uploadId, PartNumber: partNumber, Body: bytes, ContentLength: bytes.length }),
      ),
      key,
    );
    return { partNumber, etag: answer.ETag! };
  }

  async completeMultipart(key: string, uploadId: string, parts: UploadedPart[]): Promise<void> {
    await this.send(() =>
      this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: this.full(key),
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map(({ partNumber, etag }) => ({ PartNumber: partNumber, ETag: etag })) },
        }),
      ),
      key,
    );
  }

  async abortMultipart(key: string, uploadId: string): Promise<void> {
    try {
      await this.send(() => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.full(key), UploadId: uploadId })));
    } catch (error) {
      if (!(error instanceof S3ServiceException && error.name === 'NoSuchUpload')) throw error;
    }
  }

  destroy(): void {
    this.client.destroy();
    void this.objectReads.close();
  }

  private full(key: string): string {
    return `${this.prefix}${key}`;
  }

  /**
   * Sends a request (the SDK retried what it safely could), answering a missing object as ObjectMissing and
   * the store's own trouble (unreachable, 5xx, SlowDown) as 503 UNAVAILABLE.
   */
  private async send<T>(request: () => Promise<T>, key?: string): Promise<T> {
    // `key`: the request names an object (or a multipart upload of it) whose absence is ObjectMissing.
    try {
      return await request();
    } catch (error) {
      if (error instanceof S3ServiceException) {
        const status = error.$metadata.httpStatusCode ?? 0;
        // A missing object, or a multipart upload that is gone (aborted, or never in this bucket).
        if (key !== undefined && (status === 404 || ['NoSuchKey', 'NotFound', 'NoSuchUpload'].includes(error.name))) throw new ObjectMissing(key);
        if (status >= 500 || error.name === 'SlowDown') throw storeUnavailable();
        throw error;
      }
      // No answer at all: refused, reset, timed out (the SDK's own errors carry no S3 status).
      if (error instanceof DomainError) throw error;
      throw storeUnavailable();
    }
  }
}
