// The entry point, a CommonJS file: Node starts one without its ES module loader, which costs a plain ES
// module script about a tenth of `node -e 0` on Node 22 before its first line runs. What needs no command
// group, no SDK and none of band's I/O — the version, the root help, a completion script — is a file the
// build wrote (answers.ts), printed at about Node's own start-up cost. Every other run turns on Node's compile
// cache and imports run.js, band's ES modules: Node keeps their V8 code in band's cache directory, so a start
// reads it instead of compiling them again (about 7 ms of `band project list`'s 80-110 ms of CPU).
// test/startup.test.ts lists what each may load.
import fs = require('node:fs');
import nodeModule = require('node:module');
import os = require('node:os');
import path = require('node:path');

// Before anything that an older Node cannot run (Node 20 has no enableCompileCache): one line, and out.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(`band needs Node.js 22.19 or newer; this is v${process.versions.node} (${process.execPath})\n`);
  process.exit(1);
}

// `band project list | head -1`, `band --help | head`: a reader that went away is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(0);
});

/** The command lines answered by a written file, by the file's name. */
const ANSWERS: Record<string, string> = {
  '--version': 'version',
  '-V': 'version',
  '--help': 'help',
  '-h': 'help',
  help: 'help',
  'completion bash': 'completion.bash',
  'completion zsh': 'completion.zsh',
  'completion fish': 'completion.fish',
};
const answer = ANSWERS[process.argv.slice(2).join(' ')];
// The help was written 80 columns wide; a narrower terminal gets it from commander, wrapped to its width.
const fits = answer !== 'help' || !process.stdout.isTTY || process.stdout.columns >= 80;
if (answer !== undefined && fits) {
  process.stdout.write(fs.readFileSync(path.join(__dirname, 'answers', answer)));
} else {
  // Where the cache cannot be made (a read-only home), Node says so in the answer and band runs without it.
  nodeModule.enableCompileCache(path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'band', 'compile'));
  // A failure to load is an unhandled rejection: Node prints it and exits 1.
  void import('./run.js');
}
