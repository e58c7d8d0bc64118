// Stored files: the multipart upload, versions, peaks, previews, stem entries and downloads.
import { z } from 'zod';
import { PRESIGNED_DOWNLOADS } from '../openapi-fragments.js';
import { uploadFields } from '../requests.js';
import { declareRoutes } from '../route-types.js';

/** `?versionOf=` on POST /api/files/upload: the same as the multipart field, for clients that send it in the URL. */
const uploadQuery = z.object({
  versionOf: uploadFields.shape.versionOf.meta({ description: 'Any file of a series: the upload becomes its next version (also a multipart field)' }),
});

/** `DELETE /api/files/:id?series=all`: the whole series instead of one version. */
const deleteFileQuery = z.object({
  series: z.literal('all', { error: 'must be all' }).optional().meta({ description: 'all: the whole series; answers DeletedSeries' }),
});

/** `GET /api/files/:id/entries` query: where a page starts (a `nextCursor`) and how many entries it holds. */
const stemEntriesQuery = z.object({
  cursor: z.string().regex(/^\d{1,9}$/, 'must be a nextCursor of an earlier page').optional().meta({ description: 'The nextCursor of the previous page' }),
  limit: z.coerce
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(1000, 'must be at most 1000')
    .default(500)
    .meta({ description: 'Entries per page, 1–1000 (default 500)' }),
});

/** A file sent in one multipart request (resumable uploads are uploads.ts). */
export const FILE_UPLOAD_ROUTES = declareRoutes({
  uploadFile: {
    method: 'POST',
    path: '/api/files/upload',
    auth: 'write',
    query: uploadQuery,
    form: 'UploadForm',
    response: 'File',
    status: 201,
    errors: ['NOT_FOUND','PATH_TAKEN','UNCHANGED','UNAVAILABLE','INSUFFICIENT_STORAGE','QUOTA_EXCEEDED'],
    errorNotes: {
      409: 'PATH_TAKEN: the path (compared after NFC with Unicode case folding) is the path of another series\' latest version in the cut; upload it with versionOf naming that series',
      412: 'UNCHANGED: If-None-Match names the latest version\'s sha256 (with versionOf); the problem carries fileId of that version, and no byte of the body was read',
      503: 'UNAVAILABLE, with Retry-After: the database is unreachable, or the server is shutting down and cut the upload after its grace period (nothing stored)',
    },
    tag: 'files',
    summary: 'Upload a file to a cut (streamed to disk; sha256 computed while streaming)',
    description: "Type from the extension, MIME type from the table, leading bytes verified. Limits: audio {limit:CUT}, ZIP stems {limit:STEM}, images {limit:IMAGE}, session files {limit:SESSION}; 413 as soon as the limit is crossed. When cutId precedes the file part, access is checked before any byte is stored. A failed, refused or aborted upload leaves neither a file nor a row. 507 when the upload would leave less than MIN_FREE_DISK_MB free on the server's disk (INSUFFICIENT_STORAGE) or take the caller over USER_QUOTA_MB (QUOTA_EXCEEDED): before reading when Content-Length says so, else as soon as it is crossed. Versions: `versionOf` (a field before the file part, or the query parameter `?versionOf=`) names any file of a series, and the upload becomes its next version: same cut and same type (else 400 naming versionOf), an unknown or invisible file 404; `cutId` may then be left out, and the display name defaults to the latest version's. Concurrent uploads of one series get distinct consecutive numbers. With `If-None-Match: \"<sha256 hex>\"` equal to the latest version's sha256 the answer is 412 UNCHANGED (with `fileId`) as soon as versionOf is known, before any byte of the file is read: a CI re-run publishes nothing. Session folders (§16): `path` (a field before the file part) is the file's relative POSIX path in the cut's folder: 1–1024 characters after NFC, segments separated by /, each at most 255 UTF-8 bytes, none empty, . or .., no leading /, no \\, no control characters, and none of the reserved paths: no segment that is .git, .hg, .svn or .band in any case (or its Windows short name, GIT~1), no top-level .bandignore, no Windows device name (CON, PRN, AUX, NUL, COM1–COM9, LPT1–LPT9, with any extension), no segment ending in . or a space, no : (else 400 naming path; an empty path too); the server stores it NFC-normalised. A version without a path of a series whose path is reserved (stored before these rules) is 400 naming path: it must move the series. Among the latest versions of the cut's series a path is unique, compared after NFC with Unicode case folding: a taken path is 409 PATH_TAKEN unless versionOf names that series. With versionOf, another path renames the series (every version shows it) and no path keeps the series' path. With a path (given, or the series'), any extension the type table does not name is a SESSION file: application/octet-stream, no leading-byte check, served only as an attachment.",
    openapi: { parameters: [
      { name: 'If-None-Match', in: 'header', required: false, description: 'With versionOf: `\"<sha256 hex>\"` of the file; equal to the latest version\'s, 412 UNCHANGED before any byte is read', schema: { type: 'string' } },
    ] },
  },
});

/** A stored file, its versions and what is derived from it. */
export const FILE_ROUTES = declareRoutes({
  getFile: {
    method: 'GET',
    path: '/api/files/:id',
    auth: 'read',
    params: { id: 'File' },
    response: 'File',
    status: 200,
    tag: 'files',
    summary: 'A file record',
  },
  fileVersions: {
    method: 'GET',
    path: '/api/files/:id/versions',
    auth: 'read',
    params: { id: 'File' },
    response: 'FileVersions',
    status: 200,
    tag: 'files',
    summary: "Every remaining version of the file's series, oldest first",
    description: 'Any file of the series names it. Each File carries `series {id, version, latest, count}` and `review {approved, changesRequested, openComments}` for that version.',
  },
  deleteFile: {
    method: 'DELETE',
    path: '/api/files/:id',
    auth: 'write',
    params: { id: 'File' },
    query: deleteFileQuery,
    response: 'DeleteFileResult',
    status: 200,
    errors: ['FORBIDDEN'],
    tag: 'files',
    summary: 'Delete the file (its uploader or a project ADMIN); bytes removed after commit',
    description: "Deletes this version; the others stay and the series' numbers are not reused. `?series=all` deletes every version of the series (a project ADMIN, or a member who uploaded every version; else 403, nothing deleted) with their comments and reviews, and answers 200 `{seriesId, deleted: <versions>}` (DeletedSeries).",
  },
  filePeaks: {
    method: 'GET',
    path: '/api/files/:id/peaks',
    auth: 'read',
    params: { id: 'File' },
    response: 'Waveform',
    status: 200,
    errors: ['ANALYSIS_PENDING'],
    errorNotes: {
      409: 'ANALYSIS_PENDING: not analysed yet; try again shortly',
    },
    tag: 'files',
    summary: "A CUT's waveform (waveform-data v2, 1000–2000 min/max pairs, as peaks.js and wavesurfer.js read it)",
    description: 'Every CUT file and every STEM ZIP is analysed in the background after upload (File.analysis). 409 ANALYSIS_PENDING until the analysis ran; 404 for files that are not audio (STEM, IMAGE) or whose audio could not be decoded (analysis: failed).',
  },
  filePreview: {
    method: 'GET',
    path: '/api/files/:id/preview',
    auth: 'read',
    cookie: true,
    params: { id: 'File' },
    produces: { bytes: "inline; filename=\"….m4a\"; filename*=UTF-8''…" },
    status: 200,
    errors: ['PREVIEW_NOT_READY'],
    errorNotes: {
      409: 'PREVIEW_NOT_READY: not made yet (Retry-After); try again shortly',
    },
    tag: 'files',
    summary: "A CUT's listening preview (also HEAD): AAC-LC in MP4 with its index first, audio/mp4; single Range, If-None-Match",
    description: 'Every CUT file gets a preview after its analysis (File.preview): 256 kbps stereo (128 kbps mono) at 44.1 or 48 kHz, a higher rate resampled band-limited, more than two channels downmixed by ITU-R BS.775, the encoder priming trimmed by the MP4 edit list. 409 PREVIEW_NOT_READY with Retry-After while pending; 404 for files without one (not a CUT, or its audio could not be decoded). The `previews backfill` server command queues the previews of files stored before previews existed.',
  },
  stemEntries: {
    method: 'GET',
    path: '/api/files/:id/entries',
    auth: 'read',
    params: { id: 'File' },
    query: stemEntriesQuery,
    response: 'StemEntriesPage',
    status: 200,
    errors: ['VALIDATION_FAILED','ANALYSIS_PENDING'],
    errorNotes: {
      409: 'ANALYSIS_PENDING: not analysed yet; try again shortly',
    },
    tag: 'files',
    summary: "A page of a STEM ZIP's entries, in the ZIP's order (the File record lists only the first 100)",
    description: "`stems.summary.entryCount` counts every entry; this pages through all of them. Pass a page's `nextCursor` as `cursor` for the next page; it is null on the last. 409 ANALYSIS_PENDING until the analysis ran; 404 for files without entries (not a STEM, or a ZIP that could not be read).",
  },
  stemEntryPreview: {
    method: 'GET',
    path: '/api/files/:id/entries/:index/preview',
    auth: 'read',
    cookie: true,
    params: { id: 'File', index: { uuid: false, description: "The entry's index in the ZIP's entry list (0 first; StemEntry.preview.url names it)", examples: ['0'] } },
    produces: { bytes: "inline; filename=\"….m4a\"; filename*=UTF-8''…" },
    status: 200,
    errors: ['PREVIEW_NOT_READY'],
    errorNotes: {
      404: 'NOT_FOUND: no such file or entry, or the entry has no preview (not audio, its audio could not be decoded, or PREVIEW_STEMS was off when its ZIP was analysed)',
      409: 'PREVIEW_NOT_READY: not made yet (Retry-After); try again shortly',
    },
    tag: 'files',
    summary: "A STEM ZIP entry's listening preview (also HEAD), as GET /api/files/{id}/preview; single Range, If-None-Match",
    description: "With `PREVIEW_STEMS=true` every audio entry of a STEM ZIP gets a preview like a CUT's (same encoder: band-limited resampling above 48 kHz, ITU-R BS.775 downmix, AAC-LC 256k faststart MP4), made by the file's preview job after the ZIP's analysis, one entry after another. Its state is the entry's `preview` (StemEntry in File.stems and GET /api/files/{id}/entries): null when the entry gets none (not audio, or the setting was off when the ZIP was analysed: the `previews backfill` server command queues those), else a PreviewInfo whose `url` is this path. Stored at `previews/<fileId>.<index>.m4a`, counted in storage statistics as `previews`, removed with the file. Members only: share links serve no entry previews (the share page lists no entries). No `preview.ready` event per entry.",
  },
  downloadFile: {
    method: 'GET',
    path: '/api/files/:id/download',
    auth: 'read',
    cookie: true,
    params: { id: 'File' },
    produces: { bytes: "attachment; filename=\"…\"; filename*=UTF-8''…" },
    status: 200,
    tag: 'files',
    summary: 'The bytes as an attachment (also HEAD); single Range, If-None-Match, If-Modified-Since',
    description: PRESIGNED_DOWNLOADS,
  },
});
