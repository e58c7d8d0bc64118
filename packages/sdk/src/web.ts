// The web build (browsers, Deno, Bun, Workers): the Node build's API over fetch and Web streams, without the
// resumable uploads and file paths. tsup swaps in the `.web.ts` modules (tsup.config.ts), for the types too.
export * from './types.js';
export { BandClient, type BandClientOptions } from './client.js';
export { BandAbortError, BandApiError, BandConnectionError, BandNetworkError, BandTimeoutError, isAuthError, isStorageFull, isUnchanged } from './errors.js';
export { BandPromise, type RawResponse, type WithResponse } from './band-promise.js';
export type { Paged, PagedList } from './paging.js';
export type { RequestOptions, Transport, TransportOptions } from './transport.js';
export type { Tokens, TokenStore } from './session.js';
export type { FileInput } from './upload-source.js';
export type { Progress } from './transfer.js';
export type { DownloadOptions, DownloadResult } from './download.js';
export type { UploadInput } from './upload.js';
export type { ShareListTarget } from './resources/shares.js';
export type { CreateProjectInput, UpdateProjectInput } from './resources/projects.js';
export type { CreateVibeInput, UpdateVibeInput } from './resources/vibes.js';
export { AdminResource, type AdminStorageOptions } from './resources/admin.js';
export { AuthResource } from './resources/auth.js';
export { ProjectsResource } from './resources/projects.js';
export { InvitationsResource, invitationToken } from './resources/invitations.js';
export { VibesResource } from './resources/vibes.js';
export { CutsResource } from './resources/cuts.js';
export { FilesResource } from './resources/files.js';
export { SharesResource } from './resources/shares.js';
export { TokensResource, type CurrentToken } from './resources/tokens.js';
export { CommentsResource, type CommentList, type CommentListOptions, type FileCommentListOptions, type InboxListOptions, type MarkerExportOptions } from './resources/comments.js';
export { ReviewsResource } from './resources/reviews.js';
export { NotificationsResource } from './resources/notifications.js';
export { EventsResource, type SubscribeOptions, type Subscription } from './resources/events.js';
