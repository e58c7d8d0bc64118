import { randomBytes } from 'node:crypto';
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
