// The other floor of the S3 benchmark's proxied download, the one the driver's openReader is held to: a bare
// node:http server GETting a presigned URL (signed locally with the AWS SDK, the server's settings) over a
// pooled undici client and piping the body to its response.
// Usage: node s3-bare-undici-proxy-server.mjs <endpoint> <bucket>
//   GET /<key>  the object's bytes, with its Content-Length
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Agent, request } from 'undici';

const [endpoint, bucket] = process.argv.slice(2);
const s3 = new S3Client({
  endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'bench', secretAccessKey: 'bench-secret' },
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});
const dispatcher = new Agent({ keepAliveTimeout: 30_000 });

const server = createServer(async (req, res) => {
  try {
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: decodeURIComponent(req.url.slice(1)) }), { expiresIn: 300 });
    const { statusCode, headers, body } = await request(url, { dispatcher });
    res.writeHead(statusCode, { 'content-type': 'application/zip', 'content-length': headers['content-length'] });
    await pipeline(body, res);
  } catch (error) {
    res.destroy(error);
  }
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
