// The entry point. Node keeps the V8 code of band's modules in band's cache directory, so a start reads it
// instead of compiling them again (about 7 ms of `band project list`'s 80-110 ms of CPU). The cache must be on
// before the modules load, so everything else is imported after it.
import nodeModule from 'node:module';
import os from 'node:os';
import path from 'node:path';

// Before anything that an older Node cannot load (Node 20 has no enableCompileCache): one line, and out.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(`band needs Node.js 22.19 or newer; this is v${process.versions.node} (${process.execPath})\n`);
  process.exit(1);
}
// Where the cache cannot be made (a read-only home), Node says so in the answer and band runs without it.
nodeModule.enableCompileCache(path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'band', 'compile'));
await import('./run.js');
