// Resumable uploads (tus 1.0).
import {
  BAND_FILE_ID,
  header,
  INTEGER,
  OFFSET_STREAM,
  STRING,
  TUS_RESUMABLE,
  UPLOAD_EXPIRES,
  UPLOAD_OFFSET,
} from '../openapi-fragments.js';
import { declareRoutes } from '../route-types.js';

export const UPLOAD_ROUTES = declareRoutes({
  tusOptions: {
    method: 'OPTIONS',
    path: '/api/uploads',
    auth: 'anonymous',
    status: 204,
    tag: 'uploads',
    summary: 'Resumable uploads (tus 1.0.0): what this server supports; no authentication',
    openapi: {"responses":{"204":{"description":"No content","headers":{"Tus-Version":{"schema":{"type":"string","const":"1.0.0"}},"Tus-Extension":{"schema":{"type":"string","const":"creation,creation-with-upload,termination,checksum,expiration"}},"Tus-Max-Size":{"schema":{"type":"integer"},"description":"The largest type limit ({limit:STEM} unless MAX_STEM_BYTES lowers it)"},"Tus-Checksum-Algorithm":{"schema":{"type":"string","const":"sha1,sha256"}}}}}},
  },
  tusCreate: {
    method: 'POST',
    path: '/api/uploads',
    auth: 'write',
    status: 201,
    errors: ['VALIDATION_FAILED','NOT_FOUND','PATH_TAKEN','PAYLOAD_TOO_LARGE','UNSUPPORTED_MEDIA_TYPE','UNCHANGED','RATE_LIMITED','INSUFFICIENT_STORAGE','QUOTA_EXCEEDED'],
    errorNotes: {
      412: 'VALIDATION_FAILED (field Tus-Resumable): Tus-Resumable is not 1.0.0 (the answer names Tus-Version); or UNCHANGED: with versionOf, If-None-Match names the latest version\'s sha256 (the problem carries its fileId)',
    },
    tag: 'uploads',
    summary: 'Create a resumable upload (tus creation, creation-with-upload)',
    description: "The same upload as POST /api/files/upload, in pieces that survive a dropped connection, a killed client or a restarted server; any tus 1.0.0 client works. Every request of /api/uploads needs Tus-Resumable: 1.0.0 (else 412 VALIDATION_FAILED naming the header) and a Bearer token (a session token or a write personal access token). Upload-Length is required (deferred length: 400; 0: 400). Upload-Metadata (comma-separated \"key base64value\") carries cutId and filename (required; a name as every name, 1–200 characters without control or bidirectional control characters, and without / or \\: else 400 on the field filename, as a missing one; the extension decides the type) and name (optional display name), or versionOf (any file of a series: the upload becomes its next version, as with POST /api/files/upload; cutId may then be left out). With versionOf, If-None-Match \"<sha256 hex>\" equal to the latest version's sha256 is 412 UNCHANGED (with fileId) and no upload is created. Checked before any byte: access to the cut (404), the extension (415 UNSUPPORTED_FILE_TYPE), the type's limit (413 FILE_TOO_LARGE), quota and free disk (507): an incomplete upload holds its whole Upload-Length of its owner\'s quota until it completes, is terminated or expires. At most 10 incomplete uploads per user: the 11th is 429 RATE_LIMITED. A body sent as application/offset+octet-stream is the first bytes (as a PATCH at offset 0), and the answer carries Upload-Offset. path (optional) as the multipart field path: checked, normalised and made unique the same way, before any byte (400, 409 PATH_TAKEN), and again when the upload completes (a path taken meanwhile: 409 PATH_TAKEN, and the upload is gone); with a path any other extension is a SESSION file.",
    openapi: {
      parameters: [
        TUS_RESUMABLE,
        { name: 'Upload-Length', in: 'header', required: true, schema: { type: 'integer', minimum: 1 } },
        { name: 'Upload-Metadata', in: 'header', required: true, schema: STRING, description: 'cutId (or versionOf) and filename required, name and path optional; values base64' },
      ],
      requestBody: OFFSET_STREAM(false),
      responses: {
        201: {
          description: 'Created',
          headers: {
            Location: header(STRING, '/api/uploads/<id>'),
            'Upload-Expires': UPLOAD_EXPIRES('An HTTP date: 24 hours after the last bytes arrived, and at most 7 days after the creation'),
            'Upload-Offset': UPLOAD_OFFSET('Bytes received (creation-with-upload)'),
          },
        },
      },
    },
  },
  tusStatus: {
    method: 'HEAD',
    path: '/api/uploads/:id',
    auth: 'read',
    params: { id: { noun: 'Upload', description: 'The upload id, from the Location of its creation' } },
    status: 200,
    errorNotes: {
      412: 'VALIDATION_FAILED (field Tus-Resumable): Tus-Resumable is not 1.0.0',
    },
    tag: 'uploads',
    summary: 'Where an upload stands: its offset, length and expiry; once complete, the file it became',
    description: 'Only its creator sees an upload: everyone else gets 404, as for an expired or terminated upload.',
    openapi: {
      responses: {
        200: {
          description: 'No body',
          headers: {
            'Upload-Offset': UPLOAD_OFFSET(),
            'Upload-Length': header(INTEGER),
            'Upload-Expires': UPLOAD_EXPIRES(),
            'Upload-Metadata': header(STRING, 'The Upload-Metadata the upload was created with'),
            'Band-File-Id': BAND_FILE_ID('Once complete: the id of the File'),
            'Cache-Control': header({ type: 'string', const: 'no-store' }),
          },
        },
      },
    },
  },
  tusPatch: {
    method: 'PATCH',
    path: '/api/uploads/:id',
    auth: 'write',
    params: { id: { noun: 'Upload', description: 'The upload id, from the Location of its creation' } },
    status: 204,
    errors: ['VALIDATION_FAILED','OFFSET_MISMATCH','PATH_TAKEN','PAYLOAD_TOO_LARGE','UNSUPPORTED_MEDIA_TYPE','UPLOAD_LOCKED','CHECKSUM_MISMATCH','RATE_LIMITED','UNAVAILABLE','INSUFFICIENT_STORAGE','QUOTA_EXCEEDED'],
    errorNotes: {
      409: 'OFFSET_MISMATCH: Upload-Offset is not the bytes received; or PATH_TAKEN: the completing PATCH found the upload\'s path taken meanwhile by another series (the upload is gone)',
      412: 'VALIDATION_FAILED (field Tus-Resumable): Tus-Resumable is not 1.0.0',
      423: 'UPLOAD_LOCKED: another PATCH of this upload is in progress',
      460: 'CHECKSUM_MISMATCH: the bytes do not match Upload-Checksum; they were discarded',
      503: 'UNAVAILABLE, with Retry-After: the database is unreachable, the server is shutting down, or the PATCH was slower than 1 KiB/s over a minute (the bytes that arrived before are kept), or its lock was lost with a database connection',
    },
    tag: 'uploads',
    summary: 'Send bytes at the current offset (one chunk or the whole rest)',
    description: "Upload-Offset must equal the bytes received (else 409 OFFSET_MISMATCH). An optional Upload-Checksum (\"sha1 <base64>\" or \"sha256 <base64>\") covers this request's bytes: a mismatch is 460 CHECKSUM_MISMATCH and they are discarded. Bytes that arrived before a dropped connection are kept (unless a checksum must cover them); HEAD says how many. An answered PATCH is durable (on disk before the 204). The leading bytes are checked as soon as they arrive: a mismatch is 415 and the upload is terminated. A second PATCH while one is in progress (on any instance): 423 UPLOAD_LOCKED. At most 3 PATCHes of one user receive bytes at once on an instance: another is 429 RATE_LIMITED (Retry-After: 1). A PATCH slower than 1 KiB/s over a minute is cut with 503 (the bytes received before are kept). The PATCH that reaches Upload-Length records the File exactly as POST /api/files/upload does (sha256, the file.uploaded event) before it answers, with Band-File-Id.",
    openapi: {
      parameters: [
        TUS_RESUMABLE,
        { name: 'Upload-Offset', in: 'header', required: true, schema: { type: 'integer', minimum: 0 } },
        { name: 'Upload-Checksum', in: 'header', required: false, schema: STRING },
      ],
      requestBody: OFFSET_STREAM(true),
      responses: {
        204: { description: 'Stored', headers: { 'Upload-Offset': UPLOAD_OFFSET(), 'Upload-Expires': UPLOAD_EXPIRES(), 'Band-File-Id': BAND_FILE_ID('On the PATCH that completes the upload') } },
      },
    },
  },
  tusTerminate: {
    method: 'DELETE',
    path: '/api/uploads/:id',
    auth: 'write',
    params: { id: { noun: 'Upload', description: 'The upload id, from the Location of its creation' } },
    status: 204,
    errors: ['UPLOAD_LOCKED'],
    errorNotes: {
      412: 'VALIDATION_FAILED (field Tus-Resumable): Tus-Resumable is not 1.0.0',
      423: 'UPLOAD_LOCKED: a PATCH of this upload is in progress',
    },
    tag: 'uploads',
    summary: "Terminate an upload: its bytes are removed (a completed upload's File stays)",
    openapi: {"responses":{"204":{"description":"Terminated"}}},
  },
});
