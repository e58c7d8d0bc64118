// The memory baseline of events.bench.mjs: a bare node:http server that accepts every WebSocket upgrade
// with the same ws library and does nothing else (no authentication, no subscriptions).
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

const sockets = new WebSocketServer({ noServer: true });
const server = createServer((_req, res) => res.writeHead(404).end());
server.on('upgrade', (req, socket, head) => sockets.handleUpgrade(req, socket, head, () => undefined));
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
