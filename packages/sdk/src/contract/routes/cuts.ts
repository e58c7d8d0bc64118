// Cuts, the versions of a vibe, and their ZIP.
import { z } from 'zod';
import { declareRoutes } from '../route-types.js';
import { latestFilesQuery } from './latest-files-query.js';

/** `GET /api/cuts/:id/archive?versions=all`: every version, each named `<name> (v<N>).<ext>`; default the latest of each series. */
const archiveQuery = z.object({
  versions: z
    .enum(['latest', 'all'], { error: 'must be latest or all' })
    .default('latest')
    .meta({ description: 'all: every version of each series, named `<name> (v<N>).<ext>`' }),
});

export const CUT_ROUTES = declareRoutes({
  createCut: {
    method: 'POST',
    path: '/api/vibes/:vibeId/cuts',
    auth: 'write',
    params: { vibeId: 'Vibe' },
    request: 'CutNameRequest',
    response: 'Cut',
    status: 201,
    errors: ['NAME_TAKEN'],
    errorNotes: {
      409: 'NAME_TAKEN: the vibe already has a cut of this name',
    },
    tag: 'cuts',
    summary: 'Create a cut',
    description: "A cut's name is unique within its vibe, compared case-insensitively after trimming.",
  },
  getCut: {
    method: 'GET',
    path: '/api/cuts/:id',
    auth: 'read',
    params: { id: 'Cut' },
    query: latestFilesQuery,
    response: 'CutWithFiles',
    status: 200,
    tag: 'cuts',
    summary: 'A cut with its files',
    description: "Every file, every version of each series, oldest first; `?latest=true` lists only the latest version of each series: with each file's `path` (§16), what `band pull` mirrors.",
  },
  updateCut: {
    method: 'PUT',
    path: '/api/cuts/:id',
    auth: 'write',
    params: { id: 'Cut' },
    request: 'CutNameRequest',
    response: 'Cut',
    status: 200,
    errors: ['NAME_TAKEN'],
    errorNotes: {
      409: 'NAME_TAKEN: the vibe already has a cut of this name',
    },
    tag: 'cuts',
    summary: 'Rename',
    description: "A cut's name is unique within its vibe, compared case-insensitively after trimming.",
  },
  deleteCut: {
    method: 'DELETE',
    path: '/api/cuts/:id',
    auth: 'write',
    params: { id: 'Cut' },
    response: 'Deleted',
    status: 200,
    errors: ['FORBIDDEN'],
    tag: 'cuts',
    summary: 'Delete the cut and its files, on disk too',
    description: 'Any member may delete a cut that is empty or holds only their own files; one holding files uploaded by someone else needs a project ADMIN (403, nothing deleted).',
  },
  moveCut: {
    method: 'PUT',
    path: '/api/cuts/:id/move',
    auth: 'write',
    params: { id: 'Cut' },
    request: 'MoveCutRequest',
    response: 'Cut',
    status: 200,
    errors: ['NAME_TAKEN'],
    errorNotes: {
      400: 'VALIDATION_FAILED, INVALID_JSON, or CROSS_PROJECT_MOVE',
      409: 'NAME_TAKEN: the target vibe already has a cut of this name',
    },
    tag: 'cuts',
    summary: 'Move the cut to another vibe of the same project',
    description: "A cut's name is unique within its vibe, compared case-insensitively after trimming.",
  },
  cutArchive: {
    method: 'GET',
    path: '/api/cuts/:id/archive',
    auth: 'read',
    cookie: true,
    params: { id: 'Cut' },
    query: archiveQuery,
    produces: 'archive',
    status: 200,
    tag: 'cuts',
    summary: 'Every file of the cut as one ZIP (also HEAD), streamed from the stored files',
    description: "The latest version of each series; `?versions=all` holds every version, each named `<name> (v<N>).<ext>`. Entries are the cut's files in upload order, named `<display name>.<ext>` as downloads are; repeated names get ` (2)`, ` (3)`… (compared case-insensitively), and a slash in a name becomes `_`. A cut without files is an empty ZIP (22 bytes). No ranges: a broken download starts again.",
  },
});
