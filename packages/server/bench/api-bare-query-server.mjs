// The floor of the API benchmark: a bare @tinyhttp/app that answers every GET with what GET /api/projects
// costs at least, one postgres.js query (the repository's, for one user) and JSON.stringify of the records,
// with no authentication, middleware or logging. Usage: node api-bare-query-server.mjs <database url> <user id>
import { createServer } from 'node:http';
import { App } from '@tinyhttp/app';
import postgres from 'postgres';

const [url, userId] = process.argv.slice(2);
const sql = postgres(url, { max: 10, onnotice: () => undefined });
const app = new App({ settings: { xPoweredBy: false } });
app.get('*', async (_req, res) => {
  const rows = await sql`
    select p.*, m.role,
           (select count(*)::int from project_members c where c.project_id = p.id) as member_count
    from projects p join project_members m on m.project_id = p.id and m.user_id = ${userId}
    order by p.created_at desc, p.id desc`;
  const projects = rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    imageUrl: row.image === null ? null : `/uploads/images/${row.image}`,
    createdAt: row.created_at.toISOString(),
    memberCount: row.member_count,
    role: row.role,
  }));
  res.json(projects);
});
const server = createServer((req, res) => app.attach(req, res));
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => server.close(() => sql.end().then(() => process.exit(0))));
