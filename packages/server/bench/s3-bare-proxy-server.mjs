// The floor of the S3 benchmark's proxied download: a bare node:http server doing the least a server that
// sends stored bytes from S3 can do, the AWS SDK with the server's settings and the body piped to the response.
// Usage: node s3-bare-proxy-server.mjs <endpoint> <bucket>
//   GET /<key>  GetObject's body piped to the response, with its Content-Length
import { createServer } from 'node:http';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';

const [endpoint, bucket] = process.argv.slice(2);
const s3 = new S3Client({
  endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'bench', secretAccessKey: 'bench-secret' },
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});

const server = createServer(async (req, res) => {
  try {
    const { Body, ContentLength } = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: decodeURIComponent(req.url.slice(1)) }));
    res.writeHead(200, { 'content-type': 'application/zip', 'content-length': ContentLength });
    Body.pipe(res);
  } catch (error) {
    res.destroy(error);
  }
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
