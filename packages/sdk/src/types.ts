// The wire types of the bandcollab API (../../shared/API.md). They are defined here once;
// the server imports them as types so the two cannot drift apart.

export type Role = 'MEMBER' | 'ADMIN';
export type FileType = 'CUT' | 'STEM' | 'IMAGE';
/** ISO 8601 UTC timestamp with milliseconds. */
export type Timestamp = string;

export interface FieldError {
  field: string;
  message: string;
}

/** RFC 9457 problem details, as every error response carries them. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  requestId: string;
  errors?: FieldError[];
}

export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'INVALID_JSON'
  | 'CROSS_PROJECT_MOVE'
  | 'UNAUTHENTICATED'
  | 'TOKEN_EXPIRED'
  | 'INVALID_CREDENTIALS'
  | 'INVALID_REFRESH_TOKEN'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'IDP_DISABLED'
  | 'EMAIL_TAKEN'
  | 'IDENTITY_IN_USE'
  | 'ALREADY_MEMBER'
  | 'INVITATION_EMAIL_MISMATCH'
  | 'LAST_ADMIN'
  | 'ORDER_CONFLICT'
  | 'NAME_TAKEN'
  | 'FILE_TOO_LARGE'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_FILE_TYPE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'INSUFFICIENT_STORAGE'
  | 'QUOTA_EXCEEDED'
  | 'RATE_LIMITED'
  | 'INTERNAL'
  | 'UNAVAILABLE';

export interface Deleted {
  id: string;
  deleted: true;
}

// ---- auth (§3)

export interface User {
  id: string;
  email: string;
  name: string;
  role: Role;
}

export interface Me extends User {
  avatarUrl: string | null;
  createdAt: Timestamp;
}

export interface RegisterRequest {
  email: string;
  password: string;
  name: string;
  /** The token of an invitation to the same email: registers and accepts it in one step. */
  inviteToken?: string;
}

export interface LoginRequest {
  email: string;
  password: string;
  rememberMe?: boolean;
}

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

export interface AuthResult extends TokenPair {
  user: User;
}

export interface RefreshRequest {
  refreshToken?: string;
}

export interface LogoutRequest {
  refreshToken?: string;
}

export interface LogoutResult {
  ok: true;
}

/** `POST /api/auth/idp/exchange` and `/link`: the one-time code of a command-line IdP flow and its loopback redirect. */
export interface IdpExchangeRequest {
  code: string;
  redirectUri: string;
  /** The random verifier whose S256 challenge started the sign-in; a code exchanged without it is used up. */
  codeVerifier: string;
}

/** `POST /api/auth/idp/link`: the provider account is linked to the caller's. */
export interface IdpLinkResult {
  ok: true;
}

// ---- projects and members (§4)

export interface UserRef {
  id: string;
  name: string;
}

export interface Project {
  id: string;
  name: string;
  description: string | null;
  imageUrl: string | null;
  createdAt: Timestamp;
  memberCount: number;
  role: Role;
}

export interface UpdatedProject extends Project {
  updatedAt: Timestamp;
}

export interface Member {
  userId: string;
  email: string;
  name: string;
  avatarUrl: string | null;
  role: Role;
  joinedAt: Timestamp;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  invitedBy: UserRef;
  createdAt: Timestamp;
  expiresAt: Timestamp;
}

export interface ProjectDetail extends UpdatedProject {
  members: Member[];
  vibes: VibeWithCuts[];
  invitations: Invitation[];
}

export interface CreateProjectRequest {
  name: string;
  description?: string | null;
}

export interface UpdateProjectRequest {
  name?: string;
  description?: string | null;
  /** Only `null` is accepted in JSON: it clears the image. Send a new image as multipart. */
  image?: null;
}

export interface InviteRequest {
  email: string;
  role: Role;
}

/** The same answer whether or not the email has an account. */
export interface InviteResult {
  status: 'invited';
  invitation: Invitation;
  /** The link to send to the invitee; its token appears only here. */
  inviteUrl: string;
}

/** What an invitation link offers, shown to whoever holds it. */
export interface InvitationView {
  projectName: string;
  invitedBy: { name: string };
  role: Role;
  expiresAt: Timestamp;
}

export interface AcceptInvitationRequest {
  token: string;
}

export interface AcceptedInvitation {
  projectId: string;
  member: Member;
}

export interface UpdateMemberRequest {
  role: Role;
}

// ---- vibes and cuts (§5)

export interface Vibe {
  id: string;
  projectId: string;
  name: string;
  imageUrl: string | null;
  position: number;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface Cut {
  id: string;
  vibeId: string;
  projectId: string;
  name: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface CutWithFiles extends Cut {
  files: FileRecord[];
}

export interface VibeWithCuts extends Vibe {
  cuts: CutWithFiles[];
}

export interface CreateVibeRequest {
  name: string;
}

export interface UpdateVibeRequest {
  name?: string;
  image?: null;
}

export interface ReorderVibesRequest {
  vibeIds: string[];
}

export interface ReorderVibesResult {
  projectId: string;
  vibes: Vibe[];
}

export interface CreateCutRequest {
  name: string;
}

export interface UpdateCutRequest {
  name: string;
}

export interface MoveCutRequest {
  targetVibeId: string;
}

// ---- files, shares, storage (§6)

export interface Uploader {
  id: string;
  name: string;
  avatarUrl: string | null;
}

/** The API's `File` record (named FileRecord so it does not shadow the global File). */
export interface FileRecord {
  id: string;
  cutId: string;
  name: string;
  type: FileType;
  size: number;
  mimeType: string;
  url: string;
  sha256: string;
  uploadedBy: Uploader;
  createdAt: Timestamp;
}

export interface ShareRequest {
  expiresIn?: number;
}

export interface ShareLink {
  token: string;
  shareUrl: string;
  expiresAt: Timestamp | null;
}

export interface RevokeSharesResult {
  revoked: number;
}

export interface SharedFile {
  name: string;
  type: FileType;
  size: number;
  mimeType: string;
  createdAt: Timestamp;
  expiresAt: Timestamp | null;
  downloadUrl: string;
}

export interface SizeCount {
  size: number;
  count: number;
}

export interface StorageBreakdown {
  audio: SizeCount;
  stems: SizeCount;
  images: SizeCount;
}

export interface SiteStorage {
  totalSize: number;
  fileCount: number;
  breakdown: StorageBreakdown;
  userCount: number;
  projectCount: number;
}

export interface StorageStats {
  totalSize: number;
  fileCount: number;
  breakdown: StorageBreakdown;
  /** The caller's upload quota (files and images they uploaded); null when the server sets none. */
  quota: StorageQuota | null;
  /** Present only for site ADMINs. */
  site?: SiteStorage;
}

export interface StorageQuota {
  limitBytes: number;
  usedBytes: number;
}

/** The accepted upload types (§6): extension → type, MIME type and size limit. */
export interface FileTypeRule {
  type: FileType;
  mimeType: string;
  maxBytes: number;
}

const MiB = 1024 * 1024;

export const FILE_TYPES: Readonly<Record<string, FileTypeRule>> = {
  mp3: { type: 'CUT', mimeType: 'audio/mpeg', maxBytes: 100 * MiB },
  wav: { type: 'CUT', mimeType: 'audio/wav', maxBytes: 100 * MiB },
  ogg: { type: 'CUT', mimeType: 'audio/ogg', maxBytes: 100 * MiB },
  flac: { type: 'CUT', mimeType: 'audio/flac', maxBytes: 100 * MiB },
  aac: { type: 'CUT', mimeType: 'audio/aac', maxBytes: 100 * MiB },
  m4a: { type: 'CUT', mimeType: 'audio/mp4', maxBytes: 100 * MiB },
  zip: { type: 'STEM', mimeType: 'application/zip', maxBytes: 500 * MiB },
  jpg: { type: 'IMAGE', mimeType: 'image/jpeg', maxBytes: 5 * MiB },
  jpeg: { type: 'IMAGE', mimeType: 'image/jpeg', maxBytes: 5 * MiB },
  png: { type: 'IMAGE', mimeType: 'image/png', maxBytes: 5 * MiB },
  gif: { type: 'IMAGE', mimeType: 'image/gif', maxBytes: 5 * MiB },
  webp: { type: 'IMAGE', mimeType: 'image/webp', maxBytes: 5 * MiB },
};

/** The upload rule for a file name's extension (case-insensitive), or undefined when no type accepts it. */
export function fileTypeFor(filename: string): FileTypeRule | undefined {
  const dot = filename.lastIndexOf('.');
  if (dot < 0) return undefined;
  const extension = filename.slice(dot + 1).toLowerCase();
  return Object.hasOwn(FILE_TYPES, extension) ? FILE_TYPES[extension] : undefined;
}

// ---- events (§7)

export type EventType =
  | 'project.updated'
  | 'project.deleted'
  | 'member.added'
  | 'member.removed'
  | 'member.role_changed'
  | 'vibe.created'
  | 'vibe.updated'
  | 'vibe.deleted'
  | 'vibes.reordered'
  | 'cut.created'
  | 'cut.updated'
  | 'cut.moved'
  | 'cut.deleted'
  | 'file.uploaded'
  | 'file.deleted'
  | 'file.shared';

export interface ProjectEvent {
  id: string;
  type: EventType;
  projectId: string;
  actor: UserRef;
  at: Timestamp;
  data: Record<string, unknown>;
}

export interface HelloMessage {
  type: 'hello';
  userId: string;
  projectIds: string[];
}

// ---- operations (§9)

export interface Health {
  status: 'ok';
  db: 'ok';
  version: string;
}
