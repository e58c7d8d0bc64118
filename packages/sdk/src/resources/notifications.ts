import type { BandPromise } from '../band-promise.js';
import { ROUTES } from '../contract/routes.js';
import type { RequestOptions, Transport } from '../transport.js';
import type { NotificationPreferences, NotificationPreferencesChange } from '../types.js';

/** The caller's email notification preferences (§19); a session only, as the rest of /api/auth/me. */
export class NotificationsResource {
  constructor(private readonly transport: Transport) {}

  /** What you are emailed about, and whether the server sends email at all (`emailEnabled`). */
  get(options?: RequestOptions): BandPromise<NotificationPreferences> {
    return this.transport.call(ROUTES.getNotificationPreferences, {}, options);
  }

  /** Changes the kinds given (`{email: {mentions: false, digest: 'weekly'}}`); the others stay. */
  update(change: NotificationPreferencesChange, options?: RequestOptions): BandPromise<NotificationPreferences> {
    return this.transport.call(ROUTES.updateNotificationPreferences, { json: change }, options);
  }
}
