// fauxqs (the S3 emulator the tests use) in a process of its own for the S3 benchmark, so that its memory and
// CPU are not the benchmark's: prints `listening on <endpoint>` once bucket `bench` exists.
import { createServer } from 'node:net';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { startFauxqs } from 'fauxqs';

const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address();
    probe.close(() => resolve(free));
  });
});
await startFauxqs({ port, host: '127.0.0.1', logger: false });
const endpoint = `http://127.0.0.1:${port}`;
const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'bench', secretAccessKey: 'bench-secret' } });
await client.send(new CreateBucketCommand({ Bucket: 'bench' }));
client.destroy();
console.log(`listening on ${endpoint}`);
