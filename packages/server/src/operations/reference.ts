// The API reference as Markdown, generated from the OpenAPI document: served at GET /api/reference and
// committed as docs/API.md (`pnpm docs:api`; a test keeps the committed copy up to date).

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}
type Schema = Record<string, unknown>;
interface Content {
  [mediaType: string]: { schema?: Schema };
}
interface Response {
  description: string;
  headers?: Record<string, { description?: string }>;
  content?: Content;
}
interface Operation {
  tags?: readonly string[];
  summary?: string;
  description?: string;
  security?: readonly Record<string, readonly string[]>[];
  parameters?: readonly Parameter[];
  requestBody?: { required?: boolean; description?: string; content: Content };
  responses: Record<string, Response>;
}
export interface OpenApiLike {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, unknown>>;
  components: { securitySchemes: Record<string, { description?: string; type: string; scheme?: string; in?: string; name?: string }>; schemas: Record<string, Schema> };
}

const METHODS = ['options', 'get', 'head', 'post', 'put', 'patch', 'delete'];

export function renderReference(document: OpenApiLike): string {
  const lines: string[] = [
    `# ${document.info.title} ${document.info.version}`,
    '',
    'Generated from the OpenAPI 3.1 document the server serves at `GET /api/openapi.json`; the server also serves this',
    'page at `GET /api/reference`. Regenerate with `pnpm docs:api`.',
    '',
    document.info.description ?? '',
    '',
    '## Authentication',
    '',
  ];
  for (const [name, scheme] of Object.entries(document.components.securitySchemes)) {
    const how = scheme.type === 'http' ? `HTTP ${scheme.scheme ?? ''}` : `${scheme.type} \`${scheme.name ?? ''}\` in ${scheme.in ?? ''}`;
    lines.push(`- \`${name}\`: ${how}${scheme.description ? `. ${scheme.description}` : ''}`);
  }
  lines.push('', '## Endpoints', '');
  for (const [path, item] of Object.entries(document.paths)) {
    const shared = (item.parameters as Parameter[] | undefined) ?? [];
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (operation) lines.push(...renderOperation(method, path, operation, shared));
    }
  }
  lines.push('## Schemas', '');
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    lines.push(`### ${name}`, '', '```json', JSON.stringify(schema, null, 2), '```', '');
  }
  return `${lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}

function renderOperation(method: string, path: string, operation: Operation, shared: Parameter[]): string[] {
  const lines = [`### ${method.toUpperCase()} ${path}`, ''];
  if (operation.summary) lines.push(operation.summary, '');
  if (operation.description) lines.push(operation.description, '');
  const security = operation.security?.flatMap((requirement) => Object.keys(requirement)) ?? [];
  lines.push(`Authentication: ${security.length > 0 ? security.map((s) => `\`${s}\``).join(' or ') : 'none'}`, '');
  const parameters = [...shared, ...(operation.parameters ?? [])];
  if (parameters.length > 0) {
    lines.push('| parameter | in | required | type | description |', '|---|---|---|---|---|');
    for (const p of parameters) lines.push(`| \`${p.name}\` | ${p.in} | ${p.required ? 'yes' : 'no'} | ${typeOf(p.schema)} | ${cell(p.description ?? '')} |`);
    lines.push('');
  }
  if (operation.requestBody) {
    const body = operation.requestBody;
    lines.push(`Request body${body.required ? '' : ' (optional)'}: ${contentText(body.content)}${body.description ? `. ${body.description}` : ''}`, '');
  }
  lines.push('| status | meaning | body |', '|---|---|---|');
  for (const [status, response] of Object.entries(operation.responses)) {
    const headers = Object.entries(response.headers ?? {}).map(([name, header]) => `${name}${header.description ? ` (${header.description})` : ''}`);
    const meaning = headers.length > 0 ? `${response.description}. Headers: ${headers.join('; ')}` : response.description;
    lines.push(`| ${status} | ${cell(meaning)} | ${response.content ? cell(contentText(response.content)) : ''} |`);
  }
  lines.push('');
  return lines;
}

function contentText(content: Content): string {
  return Object.entries(content)
    .map(([mediaType, { schema }]) => `\`${mediaType}\`${schema ? ` ${typeOf(schema)}` : ''}`)
    .join(', ');
}

/** A schema in a few words: a link to a named schema, or its type and fields. */
function typeOf(schema: Schema | undefined): string {
  if (!schema) return '';
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').at(-1)!;
    return `[${name}](#${name.toLowerCase()})`;
  }
  if (schema.type === 'array') return `array of ${typeOf(schema.items as Schema | undefined)}`;
  if (schema.type === 'object' && schema.properties) {
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const fields = Object.entries(schema.properties as Record<string, Schema>).map(([name, field]) => `${name}${required.has(name) ? '' : '?'}: ${typeOf(field)}`);
    return `{ ${fields.join(', ')} }`;
  }
  const format = typeof schema.format === 'string' ? ` (${schema.format})` : '';
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => `\`${JSON.stringify(value)}\``).join(' \\| ');
  return `${Array.isArray(schema.type) ? schema.type.join(' \\| ') : String(schema.type ?? 'any')}${format}`;
}

/** Text fit for one table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');
}
