import { routeMethods } from '../route-methods.js';

/**
 * The caller's email notification preferences (§19); a session only, as the rest of /api/auth/me.
 * `get()`: what you are emailed about, and whether the server sends email at all (`emailEnabled`).
 * `update(change)`: changes the kinds given (`{email: {mentions: false, digest: 'weekly'}}`); the others stay.
 */
export class NotificationsResource extends routeMethods('notifications') {}
