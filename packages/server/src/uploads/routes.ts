import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { Request } from '@tinyhttp/app';
import { pathOf, resumableUploadMetadata, ROUTES } from '@bandcollab/sdk/contract';
import { inject, injectable } from 'tsyringe';
import { DomainError, invalidField } from '../core/errors.js';
import type { Feature } from '../core/feature.js';
import type { Routes } from '../core/routes.js';
import { FileTypes } from '../core/file-types.js';
import { contentType, sendProblem, validate } from '../core/http.js';
import { largestUpload } from '../files/admission.js';
import { type ChecksumAlgorithm, type PatchRequest, type UploadState, UploadsService } from './service.js';

export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,creation-with-upload,termination,checksum,expiration';
export const TUS_CHECKSUM_ALGORITHMS = 'sha1,sha256';
/** The headers a browser client must be allowed to send and read (CORS): the read ones are those API §17 lists. */
export const TUS_REQUEST_HEADERS = ['tus-resumable', 'upload-length', 'upload-metadata', 'upload-offset', 'upload-checksum'];
export const TUS_RESPONSE_HEADERS = [
  'tus-resumable',
  'tus-version',
  'tus-extension',
  'tus-max-size',
  'upload-offset',
  'upload-length',
  'upload-expires',
  'upload-metadata',
  'band-file-id',
];

const OFFSET_STREAM = 'application/offset+octet-stream';

/**
 * What `OPTIONS /api/uploads` answers. With CORS_ORIGINS set, the CORS middleware answers every OPTIONS
 * itself; app.ts sets these on that answer too.
 */
export function tusDiscoveryHeaders(fileTypes: FileTypes): Record<string, string> {
  return {
    'Tus-Version': TUS_VERSION,
    'Tus-Extension': TUS_EXTENSIONS,
    'Tus-Max-Size': String(largestUpload(fileTypes)),
    'Tus-Checksum-Algorithm': TUS_CHECKSUM_ALGORITHMS,
  };
}

/** Resumable uploads, tus 1.0.0: OPTIONS, creation (with upload), HEAD, PATCH, termination. */
@injectable()
export class UploadsRoutes implements Feature {

  constructor(
    @inject(FileTypes) private readonly fileTypes: FileTypes,
    @inject(UploadsService) private readonly uploads: UploadsService,
  ) {}

  /** Listens for deleted uploads, to remove their bytes. */
  async start(): Promise<void> {
    await this.uploads.start();
  }

  async stop(): Promise<void> {
    await this.uploads.stop();
  }

  /**
   * Every answer carries Tus-Resumable, a 401 too; each handler writes its own (headers, no body). tinyhttp
   * runs the first route of a path for HEAD, whatever its method: HEAD comes first.
   */
  register(routes: Routes): void {
    const before = (_req: unknown, res: ServerResponse) => res.setHeader('Tus-Resumable', TUS_VERSION);

    routes.on(ROUTES.tusStatus, async ({ req, res, principal, params }) => {
      if (!tusVersionSupported(req, res)) return;
      sendState(res, 200, await this.uploads.state(principal, params.id));
    }, { before });

    routes.on(ROUTES.tusOptions, async ({ res }) => {
      res.writeHead(204, tusDiscoveryHeaders(this.fileTypes));
      res.end();
    });

    routes.on(ROUTES.tusCreate, async ({ req, res, principal }) => {
      if (!tusVersionSupported(req, res)) return;
      if (req.headers['upload-defer-length'] !== undefined) throw invalidField('Upload-Defer-Length', 'is not supported: send Upload-Length');
      const length = byteCount(req, 'upload-length');
      if (length === null) throw invalidField('Upload-Length', 'is required');
      if (length === 0) throw invalidField('Upload-Length', 'must not be 0: a file must not be empty');
      const sentMetadata = header(req, 'upload-metadata') ?? '';
      const metadata = parseMetadata(sentMetadata);
      // The file name passes the rules every name does, as a multipart upload's; a missing one is reported on its field, as cutId is.
      const fields = validate(resumableUploadMetadata, {
        cutId: metadata.cutId,
        versionOf: metadata.versionOf,
        filename: metadata.filename,
        name: metadata.name,
        path: metadata.path,
      });
      const created = await this.uploads.create(principal, {
        cutId: fields.cutId ?? null,
        versionOf: fields.versionOf ?? null,
        ifNoneMatch: header(req, 'if-none-match') ?? null,
        fileName: fields.filename,
        displayName: fields.name ?? null,
        path: fields.path ?? null,
        length,
        metadata: sentMetadata,
      });
      res.setHeader('Location', pathOf(ROUTES.tusPatch, { id: created.id }));
      const state =
        contentType(req) === OFFSET_STREAM
          ? await this.uploads.patch(principal, created.id, patchRequest(req, 0))
          : created;
      sendState(res, 201, state);
    }, { before });

    routes.on(ROUTES.tusPatch, async ({ req, res, principal, params }) => {
      if (!tusVersionSupported(req, res)) return;
      if (contentType(req) !== OFFSET_STREAM) throw new DomainError('UNSUPPORTED_MEDIA_TYPE', `Send the bytes as ${OFFSET_STREAM}`);
      const offset = byteCount(req, 'upload-offset');
      if (offset === null) throw invalidField('Upload-Offset', 'is required');
      sendState(res, 204, await this.uploads.patch(principal, params.id, patchRequest(req, offset)));
    }, { before });

    routes.on(ROUTES.tusTerminate, async ({ req, res, principal, params }) => {
      if (!tusVersionSupported(req, res)) return;
      await this.uploads.terminate(principal, params.id);
      res.writeHead(204);
      res.end();
    }, { before });
  }
}

/**
 * A request for another protocol version is answered 412 with Tus-Version (after authentication and the
 * path's id, as everywhere). The error table has no code for it, so, like a 416, it carries VALIDATION_FAILED
 * (the field is the header) with HTTP's status.
 */
function tusVersionSupported(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.headers['tus-resumable'] === TUS_VERSION) return true;
  sendProblem(req, res, invalidField('Tus-Resumable', `must be ${TUS_VERSION}`), { status: 412, headers: { 'Tus-Version': TUS_VERSION } });
  return false;
}

function patchRequest(req: Request, offset: number): PatchRequest {
  return { offset, checksum: parseChecksum(header(req, 'upload-checksum')), declaredBytes: byteCount(req, 'content-length'), body: bodyOf(req) };
}

/**
 * The request's body as a stream that the service may destroy on a refusal without destroying the socket, so the
 * refusal is answered. A client that hangs up (or idles out) ends the body where its bytes stopped: what arrived
 * is kept (tus counts a PATCH's bytes as they come). Ending it, rather than destroying it with an error, keeps
 * the bytes it buffered while the service was still reading the upload's row: a hang-up before the service
 * started reading lost them, and crashed the process when the error found no reader.
 */
function bodyOf(req: IncomingMessage): Readable {
  const body = new PassThrough();
  req.once('close', () => {
    if (req.complete) return;
    req.unpipe(body);
    body.end();
  });
  req.pipe(body);
  return body;
}

function sendState(res: ServerResponse, status: 200 | 201 | 204, state: UploadState): void {
  const headers: Record<string, string> = {
    'Upload-Offset': String(state.received),
    'Upload-Length': String(state.length),
    'Upload-Expires': state.expiresAt.toUTCString(),
    'Cache-Control': 'no-store',
  };
  if (state.fileId) headers['Band-File-Id'] = state.fileId;
  // tus 1.0.0: HEAD repeats the metadata the upload was created with.
  if (status === 200 && state.metadata) headers['Upload-Metadata'] = state.metadata;
  res.writeHead(status, headers);
  res.end();
}

/** A header sent once; a repeated one counts as absent. */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** A header holding a byte count: null when absent, 400 unless a non-negative integer. */
function byteCount(req: IncomingMessage, header: string): number | null {
  const value = req.headers[header];
  if (value === undefined) return null;
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) throw invalidField(header, 'must be a non-negative integer');
  return Number(value);
}

/** `Upload-Metadata`: comma-separated `key base64value` pairs (the value may be absent). */
function parseMetadata(header: string | undefined): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const pair of (header ?? '').split(',')) {
    const [key, value = '', ...rest] = pair.trim().split(' ');
    if (!key) continue;
    if (rest.length > 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw invalidField('Upload-Metadata', `has a malformed pair for ${key}`);
    metadata[key] = Buffer.from(value, 'base64').toString('utf8');
  }
  return metadata;
}

const CHECKSUM_LENGTHS: Record<ChecksumAlgorithm, number> = { sha1: 20, sha256: 32 };

/** `Upload-Checksum: <algorithm> <base64 digest>`; an algorithm other than sha1 and sha256 is 400. */
function parseChecksum(header: string | undefined): PatchRequest['checksum'] {
  if (header === undefined) return null;
  const [algorithm, encoded] = header.trim().split(/\s+/);
  if (algorithm !== 'sha1' && algorithm !== 'sha256') throw invalidField('Upload-Checksum', `takes ${TUS_CHECKSUM_ALGORITHMS}`);
  const digest = Buffer.from(encoded ?? '', 'base64');
  if (digest.length !== CHECKSUM_LENGTHS[algorithm]) throw invalidField('Upload-Checksum', `is not a base64 ${algorithm} digest`);
  return { algorithm, digest };
}
