import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateBucketCommand, ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';
import { inject } from 'vitest';

/** fauxqs takes any credentials. */
const FAUXQS_CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test-secret' };

/**
 * Opt-in: the S3 tests against a real S3-compatible endpoint (AWS, R2, B2, MinIO) instead of the run's fauxqs,
 * when S3_TEST_ENDPOINT is set. Tests then share the existing bucket S3_TEST_BUCKET, each under a key prefix of
 * its own (S3_PREFIX), and leave objects behind: give them a bucket of their own with a lifecycle rule that
 * expires objects and incomplete multipart uploads after a day.
 */
export const realEndpoint = process.env.S3_TEST_ENDPOINT ? readRealEndpoint(process.env) : null;

function readRealEndpoint(env: NodeJS.ProcessEnv) {
  const missing = ['S3_TEST_BUCKET', 'S3_TEST_ACCESS_KEY_ID', 'S3_TEST_SECRET_ACCESS_KEY'].filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`S3_TEST_ENDPOINT is set, so the S3 tests run against it: set ${missing.join(', ')} too`);
  return {
    endpoint: env.S3_TEST_ENDPOINT!,
    bucket: env.S3_TEST_BUCKET!,
    region: env.S3_TEST_REGION || 'us-east-1',
    forcePathStyle: env.S3_TEST_FORCE_PATH_STYLE === 'true',
    credentials: { accessKeyId: env.S3_TEST_ACCESS_KEY_ID!, secretAccessKey: env.S3_TEST_SECRET_ACCESS_KEY! },
  };
}

/** Stored bytes of one's own on S3, and the settings that point a server at them. */
export async function s3TestEnv(): Promise<Record<string, string>> {
  if (realEndpoint) {
    return {
      STORAGE: 's3',
      S3_BUCKET: realEndpoint.bucket,
      S3_PREFIX: `bandcollab-test-${randomBytes(6).toString('hex')}/`,
      S3_ENDPOINT: realEndpoint.endpoint,
      S3_REGION: realEndpoint.region,
      S3_FORCE_PATH_STYLE: String(realEndpoint.forcePathStyle),
      S3_ACCESS_KEY_ID: realEndpoint.credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: realEndpoint.credentials.secretAccessKey,
    };
  }
  // A new empty bucket on the run's fauxqs.
  const endpoint = inject('s3Endpoint');
  const bucket = `t-${randomBytes(6).toString('hex')}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: FAUXQS_CREDENTIALS });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
  return {
    STORAGE: 's3',
    S3_BUCKET: bucket,
    S3_ENDPOINT: endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: FAUXQS_CREDENTIALS.accessKeyId,
    S3_SECRET_ACCESS_KEY: FAUXQS_CREDENTIALS.secretAccessKey,
  };
}

/** `TEST_STORAGE=s3` (pnpm test:s3) runs the server tests on the S3 driver. */
export const storageUnderTest = process.env.TEST_STORAGE === 's3' ? 's3' : 'fs';

/** Settings for stored bytes of one's own beside a test server's: a new bucket under TEST_STORAGE=s3 (under fs a new DATA_DIR is enough). */
export async function ownStorage(): Promise<Record<string, string>> {
  return storageUnderTest === 's3' ? s3TestEnv() : {};
}

export interface WatchedBucket {
  /** Settings that point a server at stored bytes of its own, watched. */
  env: Record<string, string>;
  /** Multipart uploads begun and neither completed nor aborted. */
  openMultipartUploads(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Stored bytes of one's own whose open multipart uploads can be counted. On a real endpoint, by asking it
 * (ListMultipartUploads under the test's prefix). fauxqs cannot list them, so there the bucket is reached
 * through a loopback pass-through that counts them: a write under way shows nowhere else.
 */
export async function watchedBucket(): Promise<WatchedBucket> {
  if (realEndpoint) {
    const env = await s3TestEnv();
    const client = new S3Client({ endpoint: realEndpoint.endpoint, region: realEndpoint.region, forcePathStyle: realEndpoint.forcePathStyle, credentials: realEndpoint.credentials });
    return {
      env,
      openMultipartUploads: async () =>
        (await client.send(new ListMultipartUploadsCommand({ Bucket: realEndpoint.bucket, Prefix: env.S3_PREFIX }))).Uploads?.length ?? 0,
      close: async () => client.destroy(),
    };
  }
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
    openMultipartUploads: async () => open,
    close: () =>
      new Promise((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
