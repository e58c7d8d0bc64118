// The baseline of the transfer benchmark: a bare node:http server doing the least an upload server can do.
// Usage: node transfer-bare-server.mjs <pipe|pipe+sha256> <dir>
//   POST /  pipes the whole request body to <dir>/upload.bin (and, in pipe+sha256, hashes it on the way)
//   GET /   streams the file named by the x-file header back with createReadStream().pipe(res)
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const [mode, dir] = process.argv.slice(2);

const server = createServer(async (req, res) => {
  try {
    if (req.method === 'POST') {
      const hash = mode === 'pipe+sha256' ? createHash('sha256') : null;
      if (hash) req.on('data', (chunk) => hash.update(chunk));
      await pipeline(req, createWriteStream(path.join(dir, 'upload.bin')));
      res.end(JSON.stringify({ sha256: hash ? hash.digest('hex') : null }));
      return;
    }
    const file = String(req.headers['x-file']);
    res.writeHead(200, { 'content-type': 'application/zip', 'content-length': (await stat(file)).size });
    createReadStream(file).pipe(res);
  } catch (error) {
    res.destroy(error);
  }
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
