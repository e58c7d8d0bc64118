// Raw OpenAPI that route declarations (routes/<feature>.ts, their `openapi` field) say for what their other fields
// do not (tus headers, response headers), and prose several features' declarations share, named once here. Plain data.

const STRING = { type: 'string' } as const;
const INTEGER = { type: 'integer' } as const;
const BINARY = { type: 'string', format: 'binary' } as const;
const UUID = { type: 'string', format: 'uuid' } as const;

/** A response header. */
export const header = (schema: Record<string, unknown>, description?: string) => (description === undefined ? { schema } : { schema, description });

/** A JSON answer of a contract record, with its headers where it has some. */
export const jsonAnswer = (record: string, description = 'OK', headers?: Record<string, unknown>) => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${record}` } } },
  ...(headers === undefined ? {} : { headers }),
});

/** Callable without credentials, and with a Bearer token, which the route then reads (logout, a link=1 start). */
export const OPTIONAL_BEARER: readonly Record<string, readonly string[]>[] = [{}, { bearer: [] }];

/** tus: the protocol version every request names. */
export const TUS_RESUMABLE = { name: 'Tus-Resumable', in: 'header', required: true, schema: { type: 'string', const: '1.0.0' } };

/** tus: a request body of upload bytes. */
export const OFFSET_STREAM = (required: boolean) => ({ required, content: { 'application/offset+octet-stream': { schema: BINARY } } });

/** tus: where an upload stands, as its answers say it. */
export const UPLOAD_OFFSET = (description?: string) => header(INTEGER, description);
export const UPLOAD_EXPIRES = (description?: string) => header(STRING, description);
export const BAND_FILE_ID = (description: string) => header(UUID, description);

/** Said of every route that answers a stored file's bytes (not ZIPs or peaks, which the server builds). */
export const PRESIGNED_DOWNLOADS =
  "With S3_PRESIGNED_DOWNLOADS=true (a server on S3) a GET of a stored file's bytes as an attachment, once checked and counted, is answered 302 to a presigned URL of the bucket (valid 300 s) that answers with the same Content-Type and Content-Disposition; bytes played or shown inline, HEAD and 304s are answered here, with nosniff and the sandbox CSP a presigned answer cannot carry.";

export { INTEGER, STRING };
