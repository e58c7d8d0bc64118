// Every endpoint of the API, declared once, by feature (routes/<feature>.ts): method, path, who may call it, its
// query (a zod object beside the feature's routes), the contract schemas of its body and answer (by name), its
// error codes and its documentation. The server registers its routes from these declarations and generates the
// OpenAPI `paths` from them; the SDK takes each call's method, path and types from them.
// Prose names a setting as `{SETTING}` and a type's upload limit as `{limit:CUT}`: the OpenAPI generator states
// each value from its one table (the server's settings, the contract's limits).
// The SDK's Node and web builds replace this module by the table's run-time fields (tsup.config.ts), so the
// feature modules and their prose never load there.
import { declareRoutes } from './route-types.js';
import { ADMIN_ROUTES } from './routes/admin.js';
import { AUTH_PAGES, AUTH_ROUTES, IDENTITY_PROVIDER_ROUTES } from './routes/auth.js';
import { COMMENT_ROUTES } from './routes/comments.js';
import { CUT_ROUTES } from './routes/cuts.js';
import { EVENT_ROUTES } from './routes/events.js';
import { FILE_ROUTES, FILE_UPLOAD_ROUTES } from './routes/files.js';
import { INVITATION_PAGES, INVITATION_ROUTES } from './routes/invitations.js';
import { MEDIA_ROUTES } from './routes/media.js';
import { NOTIFICATION_PAGES } from './routes/notifications.js';
import { OPERATIONS_ROUTES } from './routes/operations.js';
import { MEMBER_ROUTES, PROJECT_ROUTES } from './routes/projects.js';
import { REVIEW_ROUTES } from './routes/reviews.js';
import { CUT_SHARE_ROUTES, FILE_SHARE_ROUTES } from './routes/shares.js';
import { STORAGE_ROUTES } from './routes/storage.js';
import { TOKEN_ROUTES } from './routes/tokens.js';
import { TRASH_ROUTES } from './routes/trash.js';
import { UPLOAD_ROUTES } from './routes/uploads.js';
import { VIBE_ROUTES } from './routes/vibes.js';
import { WEBHOOK_ROUTES } from './routes/webhooks.js';

/**
 * The order is the OpenAPI document's (its paths and operations, docs/API.md) and a table's own order is the
 * order its routes are listed in: a feature may hold more than one table where its routes sit apart in it.
 */
export const ROUTES = declareRoutes({
  ...OPERATIONS_ROUTES,
  ...AUTH_ROUTES,
  ...TOKEN_ROUTES,
  ...IDENTITY_PROVIDER_ROUTES,
  ...PROJECT_ROUTES,
  ...INVITATION_ROUTES,
  ...MEMBER_ROUTES,
  ...VIBE_ROUTES,
  ...CUT_ROUTES,
  ...CUT_SHARE_ROUTES,
  ...FILE_UPLOAD_ROUTES,
  ...UPLOAD_ROUTES,
  ...STORAGE_ROUTES,
  ...FILE_ROUTES,
  ...FILE_SHARE_ROUTES,
  ...AUTH_PAGES,
  ...NOTIFICATION_PAGES,
  ...INVITATION_PAGES,
  ...MEDIA_ROUTES,
  ...EVENT_ROUTES,
  ...COMMENT_ROUTES,
  ...REVIEW_ROUTES,
  ...ADMIN_ROUTES,
  ...TRASH_ROUTES,
  ...WEBHOOK_ROUTES,
});
