// The caller's storage use.
import { declareRoutes } from '../route-types.js';

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
});
