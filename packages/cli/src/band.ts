// The entry point. Node keeps the V8 code of band's modules in band's cache directory, so a start reads it
// instead of compiling them again (about 7 ms of `band project list`'s 80-110 ms of CPU). The cache must be on
// before the modules load, so everything else is imported after it.
import nodeModule from 'node:module';
import os from 'node:os';
import path from 'node:path';
import packageJson from '../package.json' with { type: 'json' };

// Before anything that an older Node cannot load (Node 20 has no enableCompileCache): one line, and out.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(`band needs Node.js 22.19 or newer; this is v${process.versions.node} (${process.execPath})\n`);
  process.exit(1);
}
// Where the cache cannot be made (a read-only home), Node says so in the answer and band runs without it.
nodeModule.enableCompileCache(path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'band', 'compile'));

// What needs no command group, no SDK and none of band's I/O is answered here, at about Node's own start-up
// cost: the version from the manifest, the root help from program.ts (commander and the groups' summaries), a
// completion script from the tree written at build time. test/startup.test.ts lists what each may load.
// `band project list | head -1`, `band --help | head`: a reader that went away is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(0);
});
const args = process.argv.slice(2);
const [first = '', second = ''] = args;
const completion = args.length === 2 && first === 'completion' ? await import('./completion-scripts.js') : null;
if (args.length === 1 && (first === '--version' || first === '-V')) {
  process.stdout.write(`${packageJson.version}\n`);
} else if (args.length === 1 && ['--help', '-h', 'help'].includes(first)) {
  (await import('./program.js')).printRootHelp(process);
} else if (completion?.isCompletionShell(second)) {
  completion.printCompletion(second, process);
} else {
  await import('./run.js');
}
