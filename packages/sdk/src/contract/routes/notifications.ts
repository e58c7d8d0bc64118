// The unsubscribe links of notification emails (the preferences are the account's, in auth.ts).
import { declareRoutes } from '../route-types.js';

/** The page an email's unsubscribe link opens, and its form's POST. */
export const NOTIFICATION_PAGES = declareRoutes({
  unsubscribePage: {
    method: 'GET',
    path: '/unsubscribe/:token',
    auth: 'anonymous',
    params: { token: { uuid: false } },
    produces: 'html',
    status: 200,
    tag: 'account',
    summary: "A notification email's unsubscribe link: a page with one button that turns that kind of email off (a GET changes nothing, as mail scanners follow links)",
  },
  unsubscribe: {
    method: 'POST',
    path: '/unsubscribe/:token',
    auth: 'anonymous',
    params: { token: { uuid: false } },
    produces: 'html',
    status: 200,
    errorNotes: { 400: 'The link is not one this server signed: the page says so' },
    tag: 'account',
    summary: 'RFC 8058 one-click unsubscribe (List-Unsubscribe-Post: List-Unsubscribe=One-Click), also the page\'s button: turns the kind of email the link names off, without signing in',
    description: "The token names the account and the kind (mentions, replies, reviewRequests, newVersions, webhooks or digest) and is signed with the server's secret (HMAC-SHA256), so it needs no sign-in and cannot be made for another account; it stays valid (turning the kind off again is harmless). Turn a kind back on with PUT /api/auth/me/notifications.",
    openapi: {
      requestBody: {
        required: false,
        content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { 'List-Unsubscribe': { type: 'string', enum: ['One-Click'] } } } } },
      },
    },
  },
});
