// The baseline of the API benchmark: a bare @tinyhttp/app answering every GET with a small JSON "hello".
import { createServer } from 'node:http';
import { App } from '@tinyhttp/app';

const app = new App({ settings: { xPoweredBy: false } });
app.get('*', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = createServer((req, res) => app.attach(req, res));
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
