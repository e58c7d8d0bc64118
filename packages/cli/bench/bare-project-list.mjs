// What `band project list` is measured against: the same GET /api/projects, with node:http and nothing else,
// its answer printed. node:http comes from process.getBuiltinModule, as band's sender takes it: an ES module's
// `import` of node:http reads its WebSocket export, which loads the undici inside Node (some 40 ms).
// Usage: node bare-project-list.mjs <server url> <access token>
const { request } = process.getBuiltinModule('node:http');
const [url, token] = process.argv.slice(2);
request(`${url}/api/projects`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } }, (response) => {
  let body = '';
  response.setEncoding('utf8');
  response.on('data', (chunk) => (body += chunk));
  response.on('end', () => process.stdout.write(`${body}\n`));
}).end();
