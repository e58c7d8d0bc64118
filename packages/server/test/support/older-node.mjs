// Loaded with `--import`: the process reads as Node 20.20.2, as a systemd unit's /usr/bin/node may be.
Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '20.20.2' } });
