// The entry point: the Node.js check first, with nothing else loaded, so an older Node (a systemd unit's
// /usr/bin/node may be 20) says in one line what it needs instead of failing somewhere inside.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(`bandcollab-server needs Node.js 22.19 or newer; this is v${process.versions.node} (${process.execPath})\n`);
  process.exit(1);
}
await import('./run.js');
