// The wire types of the bandcollab API. Request bodies and the upload rules are defined once in
// `./contract` (zod schemas the server validates with); their types are re-exported here as types only,
// so importing the SDK never loads zod.
import type { FileType } from './contract/file-types.js';

export { extensionOf, FILE_TYPES, fileTypeFor, MAX_UPLOAD_BYTES, type FileType, type FileTypeRule } from './contract/file-types.js';
export type {
  AcceptInvitationRequest,
  CreateCutRequest,
  CreateProjectRequest,
  CreateVibeRequest,
  IdpExchangeRequest,
  InviteRequest,
  LoginRequest,
  LogoutRequest,
  MoveCutRequest,
  RefreshRequest,
  RegisterRequest,
  ReorderVibesRequest,
  ShareRequest,
  UpdateCutRequest,
  UpdateMemberRequest,
  UpdateProjectRequest,
  UpdateVibeRequest,
} from './contract/requests.js';

export type Role = 'MEMBER' | 'ADMIN';
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

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

export interface AuthResult extends TokenPair {
  user: User;
}

export interface LogoutResult {
  ok: true;
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

export interface AcceptedInvitation {
  projectId: string;
  member: Member;
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

export interface ReorderVibesResult {
  projectId: string;
  vibes: Vibe[];
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
  /** Present only for site ADMINs. */
  site?: SiteStorage;
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
