import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { inject } from 'vitest';

/** fauxqs takes any credentials. */
const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test-secret' };

/** A new empty bucket on the run's fauxqs, and the settings that point a server at it. */
export async function s3TestEnv(): Promise<Record<string, string>> {
  const endpoint = inject('s3Endpoint');
  const bucket = `t-${randomBytes(6).toString('hex')}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
  return {
    STORAGE: 's3',
    S3_BUCKET: bucket,
    S3_ENDPOINT: endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
  };
}

/** `TEST_STORAGE=s3` (pnpm test:s3) runs the server tests on the S3 driver. */
export const storageUnderTest = process.env.TEST_STORAGE === 's3' ? 's3' : 'fs';

/** Settings for stored bytes of one's own beside a test server's: a new bucket under TEST_STORAGE=s3 (under fs a new DATA_DIR is enough). */
export async function ownStorage(): Promise<Record<string, string>> {
  return storageUnderTest === 's3' ? s3TestEnv() : {};
}

export interface WatchedBucket {
  /** Settings that point a server at a new bucket through the watch. */
  env: Record<string, string>;
  /** Multipart uploads begun and neither completed nor aborted. */
  openMultipartUploads(): number;
  close(): Promise<void>;
}

/**
 * A new bucket on the run's fauxqs, reached through a loopback pass-through that counts the multipart uploads
 * left open: fauxqs cannot list them (no ListMultipartUploads), and a write under way shows nowhere else.
 */
export async function watchedBucket(): Promise<WatchedBucket> {
  const target = new URL(inject('s3Endpoint'));
  let open = 0;
  const proxy = createServer((req, res) => {
    const query = new URL(req.url!, target).searchParams;
    const forwarded = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      if (answer.statusCode! < 300 && req.method === 'POST' && query.has('uploads')) open += 1;
      else if (answer.statusCode! < 300 && query.has('uploadId') && (req.method === 'POST' || req.method === 'DELETE')) open -= 1;
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    env: { ...(await s3TestEnv()), S3_ENDPOINT: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` },
    openMultipartUploads: () => open,
    close: () =>
      new Promise((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
