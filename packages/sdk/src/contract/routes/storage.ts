// The caller's storage use, and a project's largest files.
import { z } from 'zod';
import { FILE_TYPE_LABELS, type FileType } from '../file-types.js';
import { declareRoutes } from '../route-types.js';

/** `GET /api/projects/:id/largest-files`: how many, and of which type. */
const largestFilesQuery = z.object({
  limit: z.coerce.number({ error: 'must be a number' }).int('must be an integer').min(1, 'must be 1 to 100').max(100, 'must be 1 to 100').default(20),
  type: z.enum(Object.keys(FILE_TYPE_LABELS) as [FileType, ...FileType[]], { error: 'must be CUT, STEM, IMAGE or SESSION' }).optional(),
});

export const STORAGE_ROUTES = declareRoutes({
  storageStats: {
    method: 'GET',
    path: '/api/files/storage',
    auth: 'read',
    response: 'StorageStats',
    status: 200,
    tag: 'storage',
    summary: "The caller's uploads by type and quota; site ADMINs also get the site block",
    description: '`images` counts every image the caller uploaded: image files on cuts, project covers and vibe images (an image replaced or removed no longer counts). `previews` counts the listening previews the server made of the caller\'s CUT files (§20). The parts add up to `totalSize` and `fileCount`; `quota.usedBytes` counts what was uploaded (`totalSize` less `previews`), as uploads are refused by. A personal access token limited to projects counts only those projects (no avatar) and never gets `site`; its `quota.usedBytes` is the account\'s.',
  },
  projectLargestFiles: {
    method: 'GET',
    path: '/api/projects/:id/largest-files',
    auth: 'read',
    params: { id: 'Project' },
    query: largestFilesQuery,
    response: 'LargestFile[]',
    status: 200,
    errors: ['VALIDATION_FAILED'],
    sdk: 'projects.largestFiles',
    tag: 'storage',
    summary: "Members: the project's largest files (every version), largest first: `limit` of them (1–100, 20 by default), of one `type` if given",
    description: 'A top list, not a page: at most `limit` files, no cursor. Files in the trash are left out (they are invisible until restored); their bytes still count in storage statistics until purged.',
  },
});
