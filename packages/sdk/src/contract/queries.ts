// The query strings of the API, by name, as route declarations name them (`query: 'FileCommentsQuery'`): the
// server validates a request's query against its route's schema before the handler runs (400 VALIDATION_FAILED
// naming the parameter), the OpenAPI generator documents each property as a query parameter, and the SDK's
// call types take their input type. Every value arrives as text.
import { z } from 'zod';
import { fileCommentsQuery, inboxCommentsQuery, markerExportQuery, sharedCommentsQuery } from './comments.js';
import {
  adminJobsQuery,
  adminStorageQuery,
  archiveQuery,
  deleteFileQuery,
  latestFilesQuery,
  stemEntriesQuery,
  uploadQuery,
  webhookDeliveriesQuery,
} from './requests.js';

/** `?download=1` on a shared file: the bytes as an attachment; any other value (or none) serves them inline. */
const downloadQuery = z.object({
  download: z.string().optional().meta({ description: '1: the bytes as an attachment rather than inline' }),
});

/** `GET /api/share/:token/preview?version=<n>`: a number that names no version of the series is 404, never 400. */
const sharedPreviewQuery = z.object({
  version: z
    .string()
    .optional()
    .meta({ description: 'A link with follow "latest": the preview of this version of the series (a whole number from 1) instead of the newest' }),
});

/** `GET /api/auth/idp`: checked by the sign-in flow itself, which answers a bad value with a redirect, not a 400. */
const idpStartQuery = z.object({
  redirect: z.string().optional().meta({ description: 'A same-origin path to return to' }),
  cliRedirect: z.string().optional().meta({ description: 'A loopback http URL with a port: the callback hands a one-time code to the command-line client' }),
  code_challenge: z.string().optional().meta({ description: 'Required with cliRedirect for a sign-in: S256 of the verifier the exchange must present (43 base64url characters)' }),
  link: z.string().optional().meta({ description: '1: link the provider to the signed-in caller' }),
  flow: z.string().optional().meta({ description: 'A command-line link flow handed off by a Bearer-authenticated link=1' }),
});

export const QUERY_SCHEMAS = {
  FileCommentsQuery: fileCommentsQuery,
  SharedCommentsQuery: sharedCommentsQuery,
  InboxCommentsQuery: inboxCommentsQuery,
  MarkerExportQuery: markerExportQuery,
  UploadQuery: uploadQuery,
  DeleteFileQuery: deleteFileQuery,
  LatestFilesQuery: latestFilesQuery,
  ArchiveQuery: archiveQuery,
  StemEntriesQuery: stemEntriesQuery,
  AdminStorageQuery: adminStorageQuery,
  AdminJobsQuery: adminJobsQuery,
  WebhookDeliveriesQuery: webhookDeliveriesQuery,
  DownloadQuery: downloadQuery,
  SharedPreviewQuery: sharedPreviewQuery,
  IdpStartQuery: idpStartQuery,
} satisfies Record<string, z.ZodObject>;
