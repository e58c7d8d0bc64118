// How band shows records, results and events to people (--json prints the records themselves). Commands hand
// what they got to a view here and never build human text themselves; render.ts puts the text on the screen
// (printable, styles, tables).
import type {
  AcceptedInvitation,
  AdminJobs,
  AdminStorage,
  AdminUser,
  AdminUserActivation,
  AudioInfo,
  Comment,
  CommentCounts,
  CreatedPersonalAccessToken,
  CreatedWebhook,
  Webhook,
  WebhookDelivery,
  CurrentToken,
  FeedbackLinkState,
  FileRecord,
  FileType,
  IncompleteUploads,
  InvitationView,
  InviteResult,
  Me,
  Member,
  PasswordChangeResult,
  PersonalAccessToken,
  Project,
  ProjectDetail,
  ProjectEvent,
  ReorderVibesResult,
  RestoredTrash,
  Review,
  ReviewList,
  RetriedJob,
  RevokeSharesResult,
  ShareLink,
  ShareRecord,
  StorageBreakdown,
  StorageQuota,
  StemAudio,
  StorageStats,
  TrashItem,
  User,
  NotificationPreferences,
  ReviewRequestsResult,
} from '@bandcollab/sdk';
import type { DownloadReport, UploadReport } from './bulk-reports.js';
import type { ProfileUser } from './settings.js';
import type { PullAction, PushAction } from './session/plan.js';
import type { SessionReport } from './session/report.js';
import { counted, formatBytes, formatTime, type Output } from './render.js';
import { shortId } from './resolve.js';

/**
 * What people call each file type (the API's codes are CUT, STEM, IMAGE and SESSION): the words of the SDK's
 * FILE_TYPE_LABELS, kept here because importing a value from the SDK would load it (undici) for --help.
 */
const TYPE_LABELS: Record<FileType, string> = { CUT: 'audio', STEM: 'stems (ZIP)', IMAGE: 'image', SESSION: 'session file' };

// ---- projects, vibes, cuts

type Container = 'project' | 'vibe' | 'cut';

/** "Created cut Take 1 in Verse (id)"; `parent` is the vibe a cut was created in. */
export function createdView(kind: Container, record: { id: string; name: string }, parent?: string): string {
  return `Created ${kind} ${record.name}${parent === undefined ? '' : ` in ${parent}`} (${record.id})`;
}

/** What --create made on the way (publish). */
export function createdOnTheWayView(kind: Container, name: string): string {
  return `Created ${kind} ${name}`;
}

/** The server answers alike whether or not the email has an account: so does this. */
export function forgotPasswordView(email: string, server: string): string {
  return `If ${email} has an account on ${server}, a link to choose a new password is on its way; it works once, within an hour.`;
}

export function updatedProjectView(project: { name: string }): string {
  return `Updated project ${project.name}`;
}

export function renamedView(kind: 'vibe' | 'cut', from: string, to: string): string {
  return `Renamed ${kind} ${from} to ${to}`;
}

export function movedCutView(cut: string, vibe: string): string {
  return `Moved cut ${cut} to ${vibe}`;
}

/** A delete's answer: with `trashedUntil`, it went to the trash (§21), and says how to get it back. */
export function deletedView(kind: Container | 'file', name: string, answer: { id: string; trashedUntil?: string }): string {
  if (answer.trashedUntil === undefined) return `Deleted ${kind} ${name}`;
  return `Moved ${kind} ${name} to the trash until ${formatTime(answer.trashedUntil)} UTC (band trash restore ${answer.id})`;
}

/** A trashed thing in a sentence: "vibe Verse", "file mix.wav (version 2)", "cover of Demo" (an image's name says what it was). */
export function trashedThing(item: TrashItem): string {
  return item.kind === 'cover' || item.kind === 'vibe_image' ? item.name : `${item.kind} ${item.name}`;
}

export function purgeQuestion(item: TrashItem): string {
  return `Delete ${trashedThing(item)} for good? It cannot be restored after this.`;
}

export function purgingView(item: TrashItem): string {
  return `Deleting ${trashedThing(item)} for good`;
}

export function trashTable(out: Output, items: readonly TrashItem[]): string {
  return out.table(
    items,
    [
      { header: 'KIND', value: (item) => item.kind },
      { header: 'NAME', value: (item) => item.name },
      { header: 'DELETED BY', value: (item) => item.deletedBy?.name ?? 'former member' },
      { header: 'UNTIL', value: (item) => `${formatTime(item.trashedUntil)} UTC` },
      { header: 'ID', value: (item) => item.id },
    ],
    'The trash is empty',
  );
}

export function restoredView(restored: RestoredTrash): string {
  return `Restored ${restored.kind === 'cover' || restored.kind === 'vibe_image' ? restored.name : `${restored.kind} ${restored.name}`}`;
}

export function vibeOrderView(result: ReorderVibesResult): string {
  return `New order: ${result.vibes.map((v) => v.name).join(', ')}`;
}

export function projectTable(out: Output, projects: readonly Project[]): string {
  return out.table(
    projects,
    [
      { header: 'NAME', value: (p) => p.name },
      { header: 'ROLE', value: (p) => p.role },
      { header: 'MEMBERS', value: (p) => String(p.memberCount) },
      { header: 'CREATED', value: (p) => formatTime(p.createdAt) },
      { header: 'ID', value: (p) => p.id },
    ],
    'No projects yet: band project create <name>',
  );
}

/** A project with its members, invitations and the tree of vibes, cuts and files. */
export function projectView(out: Output, detail: ProjectDetail): string {
  const lines = [`${out.bold(detail.name)}  ${out.dim(detail.id)}`];
  if (detail.description) lines.push(detail.description);
  lines.push(`Your role: ${detail.role}   created ${formatTime(detail.createdAt)}   updated ${formatTime(detail.updatedAt)}`);
  lines.push(`Review policy: ${reviewPolicyText(detail.reviewPolicy)}`, '', out.bold('Members'));
  for (const member of detail.members) lines.push(`  ${member.name} <${member.email}>  ${member.role}`);
  for (const invitation of detail.invitations) lines.push(`  ${invitation.email}  ${invitation.role}  (invited, expires ${formatTime(invitation.expiresAt)})`);
  lines.push('', out.bold('Vibes'));
  if (detail.vibes.length === 0) lines.push('  (none)');
  for (const vibe of detail.vibes) {
    lines.push(`  ${vibe.name}  ${out.dim(vibe.id)}`);
    for (const cut of vibe.cuts) {
      lines.push(`    ${cut.name}  ${out.dim(cut.id)}`);
      for (const file of cut.files) lines.push(`      ${file.name}  ${TYPE_LABELS[file.type]}  ${formatBytes(file.size)}  ${out.dim(file.id)}`);
    }
  }
  return lines.join('\n');
}

/** What a version needs to be ready for release, in words. */
export function reviewPolicyText(policy: { approvals: number; noOpenComments: boolean }): string {
  const approvals = `${policy.approvals} approval${policy.approvals === 1 ? '' : 's'}`;
  return `${approvals}, no request for changes${policy.noOpenComments ? ', no open comment' : ''}`;
}

/** A file as a person names it: the versions of a mix share their name, so the version goes with it ("mix.wav v3"). */
export function fileLabel(file: Pick<FileRecord, 'name' | 'series'>): string {
  return file.series.count > 1 || file.series.version > 1 ? `${file.name} v${file.series.version}` : file.name;
}

export function fileTable(out: Output, files: readonly FileRecord[]): string {
  return out.table(files, [
    { header: 'NAME', value: (f) => f.name },
    { header: 'VERSION', value: (f) => `v${f.series.version}` },
    { header: 'TYPE', value: (f) => TYPE_LABELS[f.type] },
    { header: 'SIZE', value: (f) => formatBytes(f.size) },
    { header: 'DURATION', value: (f) => fileDuration(f) },
    { header: 'UPLOADED BY', value: (f) => f.uploadedBy.name },
    { header: 'CREATED', value: (f) => formatTime(f.createdAt) },
    { header: 'ID', value: (f) => f.id },
  ]);
}

export function fileView(out: Output, file: FileRecord): string {
  return [
    `${out.bold(file.name)}  ${out.dim(file.id)}`,
    `Type:        ${TYPE_LABELS[file.type]} (${file.mimeType})`,
    `Size:        ${formatBytes(file.size)} (${file.size} bytes)`,
    `SHA-256:     ${file.sha256}`,
    `Uploaded by: ${file.uploadedBy.name}, ${formatTime(file.createdAt)}`,
    `Cut:         ${file.cutId}`,
    `Path:        ${file.url}`,
    `Analysis:    ${file.analysis}`,
    ...(file.audio ? audioLines(file.audio) : []),
    ...(file.stems ? ['', stemsTable(out, file.stems.entries), stemsVerdict(file)] : []),
  ].join('\n');
}

/** A CUT's duration, a STEM ZIP's longest stem; "pending" until analysed, "-" when there is none. */
function fileDuration(file: FileRecord): string {
  if (file.audio) return formatDuration(file.audio.durationMs);
  if (file.stems?.summary.longestMs != null) return formatDuration(file.stems.summary.longestMs);
  return file.analysis === 'pending' ? 'pending' : '-';
}

function audioLines(audio: AudioInfo): string[] {
  const { integratedLufs, loudnessRangeLu, truePeakDbtp } = audio.loudness;
  return [
    `Format:      ${formatAudio(audio)}, ${Math.round(audio.bitrate / 1000)} kbit/s`,
    `Duration:    ${formatDuration(audio.durationMs)}`,
    `Loudness:    ${integratedLufs === null ? 'silent' : `${integratedLufs.toFixed(1)} LUFS integrated`}${loudnessRangeLu === null ? '' : `, range ${loudnessRangeLu.toFixed(1)} LU`}`,
    `True peak:   ${truePeakDbtp === null ? 'none (digital silence)' : `${truePeakDbtp.toFixed(1)} dBTP`}`,
  ];
}

/** "FLAC, 48 kHz, 24-bit, stereo" */
function formatAudio(audio: StemAudio): string {
  const channels = audio.channels === 1 ? 'mono' : audio.channels === 2 ? 'stereo' : `${audio.channels} channels`;
  return [audio.codec.toUpperCase(), formatRate(audio.sampleRate), ...(audio.bitDepth ? [`${audio.bitDepth}-bit`] : []), channels].join(', ');
}

export const formatRate = (hertz: number): string => `${hertz / 1000} kHz`;

/** 205_432 ms → "3:25.4" */
function formatDuration(ms: number): string {
  const tenths = Math.round(ms / 100);
  const minutes = Math.floor(tenths / 600);
  const seconds = (tenths % 600) / 10;
  return `${minutes}:${seconds.toFixed(1).padStart(4, '0')}`;
}

function stemsTable(out: Output, entries: NonNullable<FileRecord['stems']>['entries']): string {
  return out.table(entries, [
    { header: 'ENTRY', value: (e) => e.path },
    { header: 'SIZE', value: (e) => formatBytes(e.size) },
    { header: 'FORMAT', value: (e) => (e.audio ? formatAudio(e.audio) : '-') },
    { header: 'DURATION', value: (e) => (e.audio ? formatDuration(e.audio.durationMs) : '-') },
  ]);
}

export function stemsVerdict(file: FileRecord): string {
  const summary = file.stems!.summary;
  return summary.consistent
    ? `${counted(summary.audioCount, 'stem')} ${summary.audioCount === 1 ? 'lines' : 'line'} up: one sample rate, one bit depth, one length`
    : `${counted(summary.audioCount, 'stem')} of ${summary.entryCount} ${summary.entryCount === 1 ? 'entry' : 'entries'} ${summary.audioCount === 1 ? 'does' : 'do'} not line up`;
}

/** One audio stream `band cut check` compares: a CUT file, or one audio entry of a STEM ZIP. */
export interface CheckedAudio {
  /** The file name, and for a stem the entry path after it: "stems.zip › drums.wav". */
  name: string;
  /** null when the file could not be analysed. */
  audio: StemAudio | null;
}

/** `band cut check`: every file's format side by side. */
export function cutCheckTable(out: Output, audio: readonly CheckedAudio[]): string {
  return out.table(audio, [
    { header: 'FILE', value: (a) => a.name },
    { header: 'CODEC', value: (a) => a.audio?.codec ?? 'not analysable' },
    { header: 'RATE', value: (a) => (a.audio ? formatRate(a.audio.sampleRate) : '-') },
    { header: 'BITS', value: (a) => (a.audio?.bitDepth ? String(a.audio.bitDepth) : '-') },
    { header: 'CH', value: (a) => (a.audio ? String(a.audio.channels) : '-') },
    { header: 'DURATION', value: (a) => (a.audio ? formatDuration(a.audio.durationMs) : '-') },
  ]);
}

/** "sample rates differ: 48 kHz (drums.wav, bass.wav), 44.1 kHz (vox.wav)" */
export function mismatchView(what: string, groups: ReadonlyMap<string, readonly string[]>): string {
  return `${what} differ: ${[...groups].map(([value, names]) => `${value} (${names.join(', ')})`).join(', ')}`;
}

/** The caller's storage by type, and the whole site's for a site ADMIN. */
export function storageView(out: Output, stats: StorageStats): string {
  const lines = [out.bold('Your uploads'), breakdownTable(out, stats.breakdown, stats.totalSize, stats.fileCount)];
  if (stats.quota) lines.push('', quotaLine(stats.quota));
  if (stats.site) {
    lines.push('', out.bold(`Whole site: ${counted(stats.site.userCount, 'user')}, ${counted(stats.site.projectCount, 'project')}`));
    lines.push(breakdownTable(out, stats.site.breakdown, stats.site.totalSize, stats.site.fileCount));
  }
  return lines.join('\n');
}

/** "Quota: 1.2 GiB of 5.0 GiB used (24%)"; the server counts images as well as files. */
function quotaLine(quota: StorageQuota): string {
  const percent = Math.floor((quota.usedBytes / quota.limitBytes) * 100);
  return `Quota: ${formatBytes(quota.usedBytes)} of ${formatBytes(quota.limitBytes)} used (${percent}%)`;
}

/** A site ADMIN's storage report: one row per user or project, most bytes first; then the largest files. */
export function adminStorageView(out: Output, report: AdminStorage): string {
  const sizes = { audio: (row: Usage) => formatBytes(row.breakdown.audio.size), stems: (row: Usage) => formatBytes(row.breakdown.stems.size), images: (row: Usage) => formatBytes(row.breakdown.images.size), other: (row: Usage) => formatBytes(row.breakdown.other.size) };
  const usageColumns = [
    { header: 'TOTAL', value: (row: Usage) => formatBytes(row.totalSize) },
    { header: 'FILES', value: (row: Usage) => String(row.fileCount) },
    { header: 'AUDIO', value: sizes.audio },
    { header: 'STEMS', value: sizes.stems },
    { header: 'IMAGES', value: sizes.images },
    { header: 'OTHER', value: sizes.other },
    { header: 'INCOMPLETE', value: (row: Usage) => incompleteLine(row.incompleteUploads) },
  ];
  const lines =
    report.by === 'user'
      ? [
          out.table(report.users, [
            { header: 'USER', value: (row) => (row.user.active ? row.user.email : `${row.user.email} (deactivated)`) },
            ...usageColumns,
            { header: 'QUOTA', value: (row) => (row.quota === null ? '-' : `${Math.floor((row.quota.usedBytes / row.quota.limitBytes) * 100)}% of ${formatBytes(row.quota.limitBytes)}`) },
          ], 'No accounts'),
        ]
      : [out.table(report.projects, [{ header: 'PROJECT', value: (row) => row.project.name }, ...usageColumns, { header: 'ID', value: (row) => row.project.id }], 'No projects')];
  if (report.largestFiles.length > 0) {
    lines.push('', out.bold('Largest files'));
    lines.push(
      out.table(report.largestFiles, [
        { header: 'SIZE', value: (file) => formatBytes(file.size) },
        { header: 'NAME', value: (file) => file.name },
        { header: 'TYPE', value: (file) => TYPE_LABELS[file.type] },
        { header: 'PROJECT', value: (file) => file.project.name },
        { header: 'UPLOADED BY', value: (file) => file.uploadedBy?.email ?? 'former member' },
        { header: 'ID', value: (file) => file.id },
      ]),
    );
  }
  return lines.join('\n');
}

type Usage = { totalSize: number; fileCount: number; breakdown: StorageBreakdown; incompleteUploads: IncompleteUploads };

/** "2 (1.5 MiB of 3.0 MiB)": incomplete resumable uploads, the bytes received of the bytes announced. */
function incompleteLine(uploads: IncompleteUploads): string {
  return uploads.count === 0 ? '-' : `${uploads.count} (${formatBytes(uploads.receivedBytes)} of ${formatBytes(uploads.lengthBytes)})`;
}

function breakdownTable(out: Output, breakdown: StorageBreakdown, totalSize: number, fileCount: number): string {
  const rows = [
    { type: 'audio', ...breakdown.audio },
    { type: 'stems', ...breakdown.stems },
    { type: 'images', ...breakdown.images },
    { type: 'other', ...breakdown.other },
    { type: 'total', size: totalSize, count: fileCount },
  ];
  return out.table(rows, [
    { header: 'TYPE', value: (row) => row.type },
    { header: 'SIZE', value: (row) => formatBytes(row.size) },
    { header: 'FILES', value: (row) => String(row.count) },
  ]);
}


// ---- members and invitations

export function inviteView(result: InviteResult): string {
  const { invitation } = result;
  if (result.emailed) {
    return `Emailing the invitation to ${invitation.email} (join as ${invitation.role} until ${formatTime(invitation.expiresAt)} UTC); should it not arrive, send them this link:\n${result.inviteUrl}`;
  }
  return `Send this link to ${invitation.email}; it lets them join as ${invitation.role} until ${formatTime(invitation.expiresAt)} UTC:\n${result.inviteUrl}`;
}

export function revokedInvitationView(email: string, project: string): string {
  return `Revoked the invitation of ${email} to ${project}`;
}

export function roleChangedView(member: Member, project: string): string {
  return `${member.name} is now ${member.role} of ${project}`;
}

export function removedMemberView(name: string, project: string): string {
  return `Removed ${name} from ${project}`;
}

export function invitationOfferView(offer: InvitationView): string {
  return `${offer.projectName}: ${offer.invitedBy.name} invites you as ${offer.role}, until ${formatTime(offer.expiresAt)} UTC`;
}

export function joinedView(offer: InvitationView, accepted: AcceptedInvitation): string {
  return `Joined ${offer.projectName} as ${accepted.member.role}`;
}

// ---- files

/** A new link: its URL alone on stdout (`url=$(band file share …)`), when it expires on stderr; the record with --json. */
export function showShareLink(out: Output, link: ShareLink): void {
  out.record(link, () => link.shareUrl);
  if (!out.json && link.expiresAt) out.info(`expires ${formatTime(link.expiresAt)} UTC`);
}

export function unsharedView(result: RevokeSharesResult, file: string): string {
  return `Revoked ${counted(result.revoked, 'link')} to ${file}`;
}

/** A file's listening preview (§20) in a word, with its size once made: "done (1.9 MiB)", "pending", "none". */
export function previewState({ preview }: FileRecord): string {
  return preview.status === 'done' && preview.bytes !== null ? `done (${formatBytes(preview.bytes)})` : preview.status;
}

/** What `band pull --previews` did: previews saved, those already there, those not made yet or failed. */
export function previewsPulledView(result: { fetched: string[]; skipped: string[]; failed: { name: string; reason: string }[]; notReady: string[] }): string {
  const lines = [
    ...result.failed.map(({ name, reason }) => `${name}: ${reason}`),
    ...result.notReady.map((name) => `${name}: no preview yet (pending or failed): not fetched`),
    `Fetched ${counted(result.fetched.length, 'preview')}; ${result.skipped.length} already there (same size); ${result.notReady.length} not ready; ${result.failed.length} failed`,
  ];
  return lines.join('\n');
}

/** What `band file preview` says once the preview is saved. */
export function savedPreviewView(file: FileRecord, target: string): string {
  return `Saved the preview of ${file.name} to ${target} (${formatBytes(file.preview.bytes ?? 0)}, AAC ${Math.round((file.preview.bitrate ?? 0) / 1000)} kbps)`;
}

export function savedView(file: FileRecord, target: string): string {
  return `Saved ${file.name} to ${target} (${formatBytes(file.size)})`;
}

/** The summary line of `band file download --cut`. */
export function downloadSummaryView(fileCount: number, report: DownloadReport): string {
  const downloaded = fileCount - report.skipped - report.failures.length;
  return (
    `Downloaded ${counted(downloaded, 'file')} (${formatBytes(report.downloadedBytes)}) to ${report.dir} in ${report.seconds.toFixed(1)} s; ` +
    `${report.skipped} skipped (already there, same sha256); ${report.failures.length} failed`
  );
}

export function savedArchiveView(cut: string, target: string, size: number): string {
  return `Saved cut ${cut} to ${target} (${formatBytes(size)})`;
}

// ---- share links

export function shareTable(out: Output, links: readonly ShareRecord[]): string {
  return out.table(links, [
    { header: 'ID', value: (l) => l.id },
    { header: 'CREATED BY', value: (l) => l.createdBy.name },
    { header: 'CREATED', value: (l) => formatTime(l.createdAt) },
    { header: 'EXPIRES', value: (l) => (l.expiresAt ? formatTime(l.expiresAt) : 'never') },
    { header: 'DOWNLOAD', value: (l) => (l.download ? 'yes' : 'stream only') },
    { header: 'PLAYS', value: (l) => String(l.plays) },
    { header: 'DOWNLOADS', value: (l) => String(l.downloads) },
    { header: 'ACCESSES', value: (l) => String(l.accessCount) },
    { header: 'LAST ACCESS', value: (l) => (l.lastAccessedAt ? formatTime(l.lastAccessedAt) : '-') },
  ], 'No live links');
}

export function revokedLinkView(id: string): string {
  return `Revoked link ${id}`;
}

export function feedbackLinkStateView(state: FeedbackLinkState): string {
  return state.commentsClosed ? `Link ${state.id} is closed to new comments (it still plays and shows its comments)` : `Link ${state.id} takes comments again`;
}

export function publishedView(file: FileRecord): string {
  return `Published ${file.name} (${file.id})`;
}

/** publish found the file's content on the cut already (a re-run): that record stands for it. */
export function alreadyPublishedView(localName: string, cut: { name: string }): string {
  return `${localName} is unchanged: already on cut ${cut.name} (the same content), not uploaded again`;
}

/** A new version not uploaded: the latest one has the same content. */
export function unchangedView(localName: string): string {
  return `${localName} is unchanged (the latest version has the same content): not uploaded`;
}

/** A series side by side: who uploaded each version, when, its measurements, open comments and approvals. */
export function versionsTable(out: Output, versions: readonly FileRecord[]): string {
  const decibels = (value: number | null | undefined, unit: string) => (value === null || value === undefined ? '' : `${value.toFixed(1)} ${unit}`);
  return out.table(versions, [
    { header: 'VERSION', value: (f) => `v${f.series.version}${f.series.latest ? ' (latest)' : ''}` },
    { header: 'UPLOADED BY', value: (f) => f.uploadedBy.name },
    { header: 'CREATED', value: (f) => formatTime(f.createdAt) },
    { header: 'SIZE', value: (f) => formatBytes(f.size) },
    { header: 'DURATION', value: (f) => fileDuration(f) },
    { header: 'LOUDNESS', value: (f) => decibels(f.audio?.loudness.integratedLufs, 'LUFS') },
    { header: 'TRUE PEAK', value: (f) => decibels(f.audio?.loudness.truePeakDbtp, 'dBTP') },
    { header: 'PREVIEW', value: (f) => previewState(f) },
    { header: 'OPEN COMMENTS', value: (f) => String(f.review.openComments) },
    { header: 'APPROVALS', value: (f) => `${f.review.approved}${f.review.changesRequested > 0 ? ` (${f.review.changesRequested} changes requested)` : ''}` },
    { header: 'SHA-256', value: (f) => f.sha256.slice(0, 12) },
    { header: 'ID', value: (f) => f.id },
  ]);
}

/** A file `band file upload` skips: its content is on the cut already. */
export function alreadyOnCutView(localName: string, cut: { name: string }): string {
  return `${localName} is already on cut ${cut.name} (the same content): skipped; --duplicate uploads it again`;
}

/** What Ctrl-C during an upload prints after "interrupted: ". */
export function resumeHintView(): string {
  return 'run the same command again to finish the upload (a large file resumes where it stopped)';
}

/** The summary line of a bulk upload. */
export function uploadSummaryView(fileCount: number, report: UploadReport): string {
  const uploaded = fileCount - report.skipped - report.failures.length;
  return (
    `Uploaded ${counted(uploaded, 'file')} (${formatBytes(report.uploadedBytes)}) in ${report.seconds.toFixed(1)} s; ` +
    `${report.skipped} skipped (already on the cut); ${report.failures.length} failed`
  );
}

// ---- session folders (push, pull)

type SessionAction = PushAction | PullAction;

/** The plan of a push or pull: what happens to each path and why; unchanged files only with `all` (a dry run). */
export function sessionPlanView(out: Output, actions: readonly SessionAction[], all: boolean): string {
  const shown = all ? actions : actions.filter((action) => action.action !== 'skip' || action.attention || action.deletionKept);
  return out.table(shown, [
    { header: 'ACTION', value: (action) => action.action },
    { header: 'PATH', value: (action) => action.path },
    { header: 'WHY', value: (action) => action.reason },
  ], 'Nothing to do');
}

/**
 * "Pushed 3 files (1.2 MiB); deleted 1; 1 in conflict; …; 3 files read to hash"; "Nothing pushed; 2 deletions left
 * alone (see above); …" when only deletions without --delete are there; "Up to date: nothing to push; …" when
 * every file was left alone.
 */
export function sessionSummaryView(verb: 'Pushed' | 'Pulled', report: SessionReport): string {
  const failed = new Set(report.failures.map((failure) => failure.path));
  const count = (kind: string) => report.actions.filter((action) => action.action === kind && !failed.has(action.path)).length;
  const moved = verb === 'Pushed' ? count('upload') : count('download');
  const attention = report.actions.filter((action) => action.action === 'skip' && action.attention).length;
  const kept = report.actions.filter((action) => action.deletionKept).length;
  const unchanged = `${count('skip') - attention - kept} unchanged or left alone`;
  const keptDeletions = kept > 0 ? [`${counted(kept, 'deletion')} left alone (see above)`] : [];
  const hashed = `${counted(report.hashed, 'file')} read to hash`;
  const nothing = report.actions.every((action) => action.action === 'skip' && !action.attention) && report.failures.length === 0;
  if (nothing && kept === 0) return `Up to date: nothing to ${verb === 'Pushed' ? 'push' : 'pull'}; ${unchanged}; ${hashed}`;
  if (nothing) return [`Nothing ${verb.toLowerCase()}`, ...keptDeletions, unchanged, hashed].join('; ');
  const parts = [
    `${verb} ${counted(moved, 'file')} (${formatBytes(report.bytes)})`,
    `${verb === 'Pushed' ? 'deleted' : 'moved to .band/trash/'} ${count('delete')}`,
    `${count('conflict')} in conflict`,
    ...(attention > 0 ? [`${attention} skipped (see above)`] : []),
    ...keptDeletions,
    unchanged,
    `${report.failures.length} failed`,
    hashed,
  ];
  return parts.join('; ');
}

export function symlinkSkippedView(relative: string): string {
  return `skipped ${relative}: a symbolic link (never followed)`;
}

// ---- comments and reviews

/** Where a comment is pinned: "1:23.450", a range "1:23.450–1:31.000", or the whole mix. */
function pinnedAt(comment: Comment): string {
  if (comment.atMs === null) return 'whole mix';
  return comment.endMs === null ? clockTime(comment.atMs) : `${clockTime(comment.atMs)}–${clockTime(comment.endMs)}`;
}

/** A comment's text, each line indented under its heading; a deleted one keeps its place. */
function commentBody(comment: Comment, indent: string): string[] {
  if (comment.deleted || comment.body === null) return [`${indent}(deleted)`];
  const mentions = comment.mentions.length > 0 ? `  (to ${comment.mentions.map((m) => m.name).join(', ')})` : '';
  const lines = comment.body.split('\n');
  lines[lines.length - 1] += `${comment.edited ? ' (edited)' : ''}${mentions}`;
  return lines.map((line) => `${indent}${line}`);
}

function commentStatus(comment: Comment): string {
  return comment.resolved ? `resolved by ${comment.resolved.by.name}` : 'open';
}

/**
 * Comment threads, each top-level comment with its time, author, status and version, its replies under it;
 * `fileName` names the file of each (for a cut's or a project's inbox). `counts` close the list.
 */
export function commentThreads(out: Output, comments: readonly Comment[], counts: CommentCounts, fileName?: NameOf): string {
  const lines: string[] = [];
  for (const comment of comments) {
    const file = fileName ? `${fileName(comment.fileId) ?? 'a file'}  ` : '';
    lines.push(`${file}${out.bold(pinnedAt(comment))}  ${comment.author.name}${comment.author.guest ? ' (guest)' : ''}  ${commentStatus(comment)}  v${comment.version}  ${formatTime(comment.createdAt)}  ${out.dim(shortId(comment.id))}`);
    lines.push(...commentBody(comment, '    '));
    for (const reply of comment.replies ?? []) {
      lines.push(`    ↳ ${reply.author.name}${reply.author.guest ? ' (guest)' : ''}  ${formatTime(reply.createdAt)}  ${out.dim(shortId(reply.id))}`);
      lines.push(...commentBody(reply, '      '));
    }
  }
  if (comments.length === 0) lines.push('No comments');
  lines.push(`${counts.open} open, ${counts.resolved} resolved`);
  return lines.join('\n');
}

/** "Commented on mix.wav at 1:23.450 (id)" */
export function commentedView(comment: Comment, file: string): string {
  return `Commented on ${file} v${comment.version} at ${pinnedAt(comment)} (${shortId(comment.id)})`;
}

export function repliedView(reply: Comment, parent: Comment): string {
  return `Replied to ${parent.author.name}'s comment at ${pinnedAt(parent)} (${shortId(reply.id)})`;
}

export function commentChangedView(verb: 'Resolved' | 'Reopened' | 'Edited', comment: Comment): string {
  return `${verb} ${comment.author.name}'s comment at ${pinnedAt(comment)} (${shortId(comment.id)})`;
}

/** The question before deleting a comment: whose, where, and its first line. */
export function deleteCommentQuestion(comment: Comment): string {
  const firstLine = (comment.body ?? '').split('\n')[0]!;
  const shown = firstLine.length > 60 ? `${firstLine.slice(0, 59)}…` : firstLine;
  return `Delete ${comment.author.name}'s comment at ${pinnedAt(comment)} ("${shown}")?`;
}

/**
 * With the trash on (`trashedUntil`), a comment goes there with its replies, restorable; off, a top-level
 * comment with replies stays as a tombstone that keeps them.
 */
export function deletedCommentView(comment: Comment, answer: { trashedUntil?: string }): string {
  const replies = comment.replies?.length ?? 0;
  if (answer.trashedUntil !== undefined) {
    const withReplies = replies === 0 ? '' : ` and its ${replies === 1 ? 'reply' : `${replies} replies`}`;
    return `Moved the comment at ${pinnedAt(comment)}${withReplies} to the trash until ${formatTime(answer.trashedUntil)} UTC (band trash restore ${comment.id})`;
  }
  const kept = replies === 0 ? '' : `; its ${replies === 1 ? 'reply stays' : `${replies} replies stay`}`;
  return `Deleted the comment at ${pinnedAt(comment)} (${comment.id})${kept}`;
}

const MARKER_FORMAT_LABELS: Record<string, string> = {
  midi: 'MIDI markers',
  rpp: 'a REAPER project',
  wav: 'a WAV with cue points',
  audacity: 'Audacity labels',
  csv: 'CSV',
  json: 'JSON',
};

export function exportedMarkersView(file: string, format: string, target: string, size: number): string {
  return `Saved the comments of ${file} as ${MARKER_FORMAT_LABELS[format] ?? format} to ${target} (${formatBytes(size)})`;
}

/** What a marker export left out ("" when nothing): csv and json carry it. */
export function leftOutView(wholeMix: number, replies: number): string {
  const left = [wholeMix > 0 ? counted(wholeMix, 'whole-mix comment') : '', replies > 0 ? (replies === 1 ? '1 reply' : `${replies} replies`) : ''].filter(Boolean);
  return left.length === 0 ? '' : `Left out ${left.join(' and ')}: markers have a time and no thread (--format csv or json keeps them)`;
}

export function reviewedView(review: Review, file: string): string {
  return `${review.state === 'approved' ? 'Approved' : 'Requested changes to'} ${file}${review.note ? `: ${review.note}` : ''}`;
}

export function reviewRequestedView(result: ReviewRequestsResult, file: string, asked: readonly string[]): string {
  const names = result.reviewRequests.filter((request) => asked.includes(request.userId)).map((request) => request.name);
  const mailed = result.emailed ? 'emailed' : 'not emailed (the server sends no email, or they turned review requests off)';
  return `Asked ${names.join(', ')} to review ${file}: ${mailed}`;
}

/** `band notify show`: each kind of email, on or off, and the digest's frequency. */
export function notificationPreferencesView(preferences: NotificationPreferences): string {
  const { email } = preferences;
  const onOff = (on: boolean) => (on ? 'on' : 'off');
  const lines = [
    `mentions         ${onOff(email.mentions)}`,
    `replies          ${onOff(email.replies)}`,
    `review-requests  ${onOff(email.reviewRequests)}`,
    `new-versions     ${onOff(email.newVersions)}`,
    `webhooks         ${onOff(email.webhooks)}`,
    `digest           ${email.digest}`,
  ];
  if (!preferences.emailEnabled) lines.push('', 'This server sends no email (SMTP_URL and MAIL_FROM unset): the preferences are kept, nothing is sent.');
  return lines.join('\n');
}

export function withdrawnReviewView(file: string): string {
  return `Withdrew your review of ${file}`;
}

/** `band review status`: who reviewed the version how, and the summary. */
export function reviewStatusView(out: Output, file: string, list: ReviewList): string {
  const { approved, changesRequested, openComments } = list.summary;
  return [
    out.table(
      list.reviews,
      [
        { header: 'MEMBER', value: (r) => (r.token === null ? r.name : `${r.name} (token ${r.token})`) },
        { header: 'REVIEW', value: (r) => (r.state === 'approved' ? 'approved' : 'changes requested') },
        { header: 'AT', value: (r) => formatTime(r.at) },
        { header: 'NOTE', value: (r) => (r.note ?? '').replace(/\n/g, ' ') },
      ],
      'No reviews yet',
    ),
    `${file}: ${approved} approved, ${changesRequested} changes requested, ${counted(openComments, 'open comment')}`,
  ].join('\n');
}

/** What keeps a version from release under `band review status`'s requirements. */
export interface ReleaseShortfall {
  approvals?: { have: number; need: number };
  changesRequestedBy?: readonly string[];
  openComments?: number;
}

/** "mix.wav is not ready: 1 of 2 approvals; changes requested by Ben; 3 open comments" */
export function notReadyView(file: string, shortfall: ReleaseShortfall): string {
  const reasons: string[] = [];
  if (shortfall.approvals) reasons.push(`${shortfall.approvals.have} of ${counted(shortfall.approvals.need, 'approval')}`);
  if (shortfall.changesRequestedBy) reasons.push(`changes requested by ${shortfall.changesRequestedBy.join(', ')}`);
  if (shortfall.openComments) reasons.push(counted(shortfall.openComments, 'open comment'));
  return `${file} is not ready: ${reasons.join('; ')}`;
}

export function readyView(file: string, approved: number): string {
  return `${file} is ready: ${counted(approved, 'approval')}`;
}

// ---- sign-in

/** A sign-in that was stored: "Logged in to <server> as Ana <ana@…> (credentials in …)". */
export function signedInView(verb: string, apiUrl: string, user: User, location: string): string {
  return `${verb} to ${apiUrl} as ${user.name} <${user.email}> (credentials in ${location})`;
}

export function loggedOutView(wasLoggedIn: boolean, apiUrl: string): string {
  return wasLoggedIn ? `Logged out of ${apiUrl}` : `Not logged in to ${apiUrl}`;
}

export function statusView(
  me: Me,
  where: { apiUrl: string; profile: string; credentials: string; servers: readonly StoredServer[] },
  token: { token: CurrentToken; projectNames: ReadonlyMap<string, string> } | null = null,
): string {
  const lines = [
    `Logged in to ${where.apiUrl} as ${me.name} <${me.email}>${me.role === 'ADMIN' ? ' (site admin)' : ''}`,
    `Profile:     ${where.profile}`,
    `Credentials: ${where.credentials}`,
    ...where.servers.map((server, index) => `${index === 0 ? 'Servers:' : ''.padEnd(8)}     ${server.isDefault ? '*' : ' '} ${server.origin}  ${server.user.name} <${server.user.email}>`),
  ];
  if (token) {
    lines.push(
      `Token:       a personal access token, scope ${token.token.scope}, expires ${formatTime(token.token.expiresAt)}`,
      `Projects:    ${tokenProjects(token.token.projectIds, token.projectNames)}`,
    );
  }
  return lines.join('\n');
}

/** A server this profile is logged in to, for `band auth status`. */
export interface StoredServer {
  origin: string;
  user: ProfileUser;
  /** The one band uses without --api-url or BAND_API_URL. */
  isDefault: boolean;
}

/** A login on another server than the default: the default stays. */
export function defaultKeptView(defaultUrl: string, apiUrl: string): string {
  return `band still uses ${defaultUrl} by default; to use ${apiUrl}: band auth use ${apiUrl}`;
}

/** What `band auth use` did. */
export function usedServerView(apiUrl: string, user: ProfileUser | undefined): string {
  return `band now uses ${apiUrl} by default (${user ? `logged in as ${user.name} <${user.email}>` : 'not logged in there yet: band auth login'})`;
}

// ---- personal access tokens

/** "all yours", or the names of the projects a token is limited to (ids of projects no longer yours). */
function tokenProjects(projectIds: readonly string[] | null, names: ReadonlyMap<string, string>): string {
  return projectIds === null ? 'all yours' : projectIds.map((id) => names.get(id) ?? id).join(', ');
}

/** Said on stderr after the token itself went to stdout. */
export function createdTokenView(token: CreatedPersonalAccessToken): string {
  const limit = token.projectIds === null ? 'all your projects' : counted(token.projectIds.length, 'project');
  return (
    `Created token ${token.name} (${token.scope}, ${limit}, expires ${formatTime(token.expiresAt)}). ` +
    'It is not shown again: store it as a secret and use it as BAND_TOKEN.'
  );
}

export function tokenTable(out: Output, tokens: readonly PersonalAccessToken[], projectNames: ReadonlyMap<string, string>): string {
  return out.table(
    tokens,
    [
      { header: 'NAME', value: (t) => t.name },
      { header: 'HINT', value: (t) => t.tokenHint },
      { header: 'SCOPE', value: (t) => t.scope },
      { header: 'PROJECTS', value: (t) => tokenProjects(t.projectIds, projectNames) },
      { header: 'EXPIRES', value: (t) => formatTime(t.expiresAt) },
      { header: 'LAST USED', value: (t) => (t.lastUsedAt === null ? 'never' : formatTime(t.lastUsedAt)) },
      { header: 'ID', value: (t) => t.id },
    ],
    'No tokens: band token create <name> --expires 90d',
  );
}

// ---- webhooks

export function createdWebhookView(webhook: CreatedWebhook, rotated: boolean): string {
  return (
    `${rotated ? 'Rotated the secret of' : 'Added'} webhook ${webhook.id} → ${webhook.url}. ` +
    `Its secret is not shown again: store it where the receiver checks signatures${rotated ? ' (the old one signs beside it for 24 hours)' : ''}.`
  );
}

export function webhookTable(out: Output, webhooks: readonly Webhook[]): string {
  return out.table(
    webhooks,
    [
      { header: 'URL', value: (w) => w.url },
      { header: 'EVENTS', value: (w) => w.events.join(',') },
      { header: 'FORMAT', value: (w) => w.format },
      { header: 'STATUS', value: (w) => (w.enabled ? 'enabled' : `disabled${w.disabledReason ? `: ${w.disabledReason}` : ''}`) },
      { header: 'ID', value: (w) => w.id },
    ],
    'No webhooks: band webhook add <url> --events "*"',
  );
}

export function webhookView(webhook: Webhook): string {
  return [
    `Webhook ${webhook.id}${webhook.description ? ` (${webhook.description})` : ''}`,
    `  url:     ${webhook.url}`,
    `  events:  ${webhook.events.join(', ')}`,
    `  format:  ${webhook.format}`,
    `  scope:   ${webhook.projectId === null ? 'your account (all your projects)' : `project ${webhook.projectId}`}`,
    `  status:  ${webhook.enabled ? 'enabled' : `disabled${webhook.disabledReason ? `: ${webhook.disabledReason}` : ''}`}`,
  ].join('\n');
}

export function webhookDeliveryTable(out: Output, deliveries: readonly WebhookDelivery[]): string {
  return out.table(
    deliveries,
    [
      { header: 'WHEN', value: (d) => formatTime(d.createdAt) },
      { header: 'TYPE', value: (d) => d.type },
      { header: 'STATUS', value: (d) => d.status },
      { header: 'ATTEMPTS', value: (d) => String(d.attempts.length) },
      { header: 'LAST', value: (d) => lastAttempt(d) },
      { header: 'NEXT', value: (d) => (d.nextAttemptAt ? formatTime(d.nextAttemptAt) : '') },
      { header: 'ID', value: (d) => d.id },
    ],
    'No deliveries in the last 30 days',
  );
}

function lastAttempt(delivery: WebhookDelivery): string {
  const last = delivery.attempts.at(-1);
  if (!last) return '';
  return `${last.statusCode ?? last.error ?? ''} in ${last.durationMs} ms`;
}

export const queuedDeliveryView = (delivery: WebhookDelivery): string => `Queued delivery ${delivery.id} (${delivery.type}).`;

// ---- site administration

export function adminUserTable(out: Output, users: readonly AdminUser[]): string {
  return out.table(users, [
    { header: 'EMAIL', value: (u) => u.email },
    { header: 'NAME', value: (u) => u.name },
    { header: 'ROLE', value: (u) => u.role },
    { header: 'STATUS', value: (u) => (u.active ? 'active' : 'deactivated') },
    { header: 'LAST SIGN-IN', value: (u) => formatTime(u.lastSignInAt) },
    { header: 'ID', value: (u) => u.id },
  ]);
}

/** The job counts by kind and state, how long the oldest due job waits, then the failed jobs with their errors. */
export function adminJobsView(out: Output, jobs: AdminJobs): string {
  const lines = [jobs.counts.length === 0 ? 'No jobs' : out.table(jobs.counts, [
    { header: 'KIND', value: (c) => c.kind },
    { header: 'STATE', value: (c) => c.state },
    { header: 'JOBS', value: (c) => String(c.count) },
  ])];
  lines.push('', jobs.oldestQueuedSeconds === null ? 'No job is waiting to start' : `The oldest job due has waited ${Math.round(jobs.oldestQueuedSeconds)} s`);
  if (jobs.failed.length > 0) {
    lines.push('', out.bold('Failed'), out.table(jobs.failed, [
      { header: 'ID', value: (j) => j.id },
      { header: 'KIND', value: (j) => j.kind },
      { header: 'ATTEMPTS', value: (j) => `${j.attempts}/${j.maxAttempts}` },
      { header: 'FAILED', value: (j) => formatTime(j.finishedAt) },
      { header: 'LAST ERROR', value: (j) => j.lastError ?? '' },
    ]));
  }
  return lines.join('\n');
}

export function retriedJobView(job: RetriedJob): string {
  return `Job ${job.id} is ${job.state} again`;
}

export function userActiveView(user: AdminUserActivation): string {
  const state = user.active
    ? `${user.email} is active: it can sign in again`
    : `${user.email} is deactivated: it cannot sign in, its sessions and tokens ended; its files stay`;
  if (user.shareLinks.length === 0) return state;
  const links = user.shareLinks.map((link) => `  ${link.kind} "${link.name}" (link ${link.id}${link.expiresAt ? `, expires ${formatTime(link.expiresAt)}` : ''})`);
  return [state, `${user.shareLinks.length} share link(s) ${user.active ? 'serving again' : 'suspended while it is deactivated'}:`, ...links].join('\n');
}

export function revokedTokenView(token: PersonalAccessToken): string {
  return `Revoked token ${token.name} (${token.tokenHint})`;
}

/** Where to sign in when band cannot open a browser itself. */
export function openInBrowserView(purpose: string, address: string): string {
  return `open this address in a browser to ${purpose}: ${address}`;
}

export function profileView(me: Me): string {
  return [`Name:   ${me.name} <${me.email}>`, `Avatar: ${me.avatarUrl ?? 'none'}`].join('\n');
}

/** After a password change: the tokens it revoked, or the ones that still work and how to end them. */
export function passwordChangedView(out: Output, changed: PasswordChangeResult): string {
  const done = 'Password changed; your other sessions have ended';
  if (changed.revokedTokens > 0) return `${done}; revoked ${counted(changed.revokedTokens, 'personal access token')}`;
  if (changed.tokens.length === 0) return done;
  return [
    `${done}. These personal access tokens still work (band auth password --revoke-tokens ends them all, band token revoke one):`,
    tokenTable(out, changed.tokens, new Map()),
  ].join('\n');
}

export function accountDeletedView(email: string, apiUrl: string): string {
  return `Deleted the account ${email} on ${apiUrl}, and forgot its credentials`;
}

export function linkedView(me: Me, apiUrl: string): string {
  return `Linked your identity-provider account to ${me.name} <${me.email}> on ${apiUrl}: band auth login --web now signs in to it`;
}

// ---- events (watch)

export function watchingView(projectCount: number): string {
  return `watching ${counted(projectCount, 'project')} (Ctrl-C to stop)`;
}

export function disconnectedView(code: number, retryInMs: number): string {
  return `connection lost (${code}); reconnecting in ${(retryInMs / 1000).toFixed(1)} s; events in between are not replayed`;
}

/** The name of a project, member, vibe, cut or file by id, when known. */
export type NameOf = (id: string) => string | undefined;

export function eventLine(out: Output, event: ProjectEvent, nameOf: NameOf): string {
  const time = `${event.at.slice(0, 10)} ${event.at.slice(11, 19)} UTC`;
  const project = nameOf(event.projectId) ?? 'a project';
  const actor = event.actor.token === undefined ? event.actor.name : `${event.actor.name} (token "${event.actor.token}")`;
  return `${out.dim(time)}  ${out.bold(project)}  ${event.type}  ${actor} ${describeEvent(event, nameOf)}`;
}

/** What the actor did, in words; something whose name band never saw is "a vibe", "a file"… */
function describeEvent(event: ProjectEvent, nameOf: NameOf): string {
  const named = (kind: string, id: string) => {
    const name = nameOf(id);
    return name === undefined ? `a ${kind}` : `${kind} "${name}"`;
  };
  switch (event.type) {
    case 'project.updated':
      return `updated the project (now "${event.data.project.name}")`;
    case 'project.deleted':
      return 'deleted the project';
    case 'member.added':
      return `added ${event.data.member.name} as ${event.data.member.role}`;
    case 'member.removed':
      return event.data.userId === event.actor.id ? 'left the project' : `removed ${nameOf(event.data.userId) ?? 'a member'}`;
    case 'member.role_changed':
      return `made ${event.data.member.name} ${event.data.member.role}`;
    case 'member.updated':
      return 'changed their name or avatar';
    case 'vibe.created':
      return `created vibe "${event.data.vibe.name}"`;
    case 'vibe.updated':
      return `updated vibe "${event.data.vibe.name}"`;
    case 'vibe.deleted':
      return `deleted ${named('vibe', event.data.vibeId)}`;
    case 'vibes.reordered':
      return `reordered the vibes: ${event.data.vibeIds.map((id) => nameOf(id) ?? '?').join(', ')}`;
    case 'cut.created':
      return `created cut "${event.data.cut.name}"`;
    case 'cut.updated':
      return `updated cut "${event.data.cut.name}"`;
    case 'cut.moved': {
      const from = nameOf(event.data.fromVibeId);
      const to = nameOf(event.data.cut.vibeId);
      return `moved cut "${event.data.cut.name}"${from === undefined ? '' : ` from "${from}"`} to ${to === undefined ? 'a vibe' : `"${to}"`}`;
    }
    case 'cut.deleted':
      return `deleted ${named('cut', event.data.cutId)}`;
    case 'file.uploaded': {
      const { file } = event.data;
      return `uploaded "${file.name}" to ${named('cut', file.cutId)} (${TYPE_LABELS[file.type]}, ${formatBytes(file.size)})`;
    }
    case 'file.deleted':
      return `deleted ${named('file', event.data.fileId)}`;
    case 'file.shared':
      return `shared ${named('file', event.data.fileId)} ${event.data.expiresAt ? `until ${formatTime(event.data.expiresAt)} UTC` : '(no expiry)'}`;
    case 'file.analyzed':
      // The actor is the uploader: the analysis completes their upload.
      return `${named('file', event.data.fileId)} analysed: ${event.data.analysis}`;
    case 'preview.ready':
      // The actor is the uploader: the preview completes their upload.
      return `${named('file', event.data.fileId)} preview ready (${formatBytes(event.data.preview.bytes ?? 0)})`;
    case 'cut.shared':
      return `shared ${named('cut', event.data.cutId)} ${event.data.expiresAt ? `until ${formatTime(event.data.expiresAt)} UTC` : '(no expiry)'}`;
    case 'comment.created':
      return `${event.data.parentId === null ? 'commented on' : 'replied on'} ${named('file', event.data.fileId)}${event.data.atMs === null ? '' : ` at ${clockTime(event.data.atMs)}`}`;
    case 'comment.updated':
      return `edited a comment on ${named('file', event.data.fileId)}`;
    case 'comment.resolved':
      return `resolved a comment on ${named('file', event.data.fileId)}`;
    case 'comment.reopened':
      return `reopened a comment on ${named('file', event.data.fileId)}`;
    case 'comment.deleted':
      return `deleted a comment on ${named('file', event.data.fileId)}`;
    case 'project.trashed':
      return 'moved the project to the trash';
    case 'project.restored':
      return 'restored the project from the trash';
    case 'vibe.trashed':
      return `moved ${named('vibe', event.data.vibeId)} to the trash`;
    case 'vibe.restored':
      return `restored ${named('vibe', event.data.vibeId)} from the trash`;
    case 'cut.trashed':
      return `moved ${named('cut', event.data.cutId)} to the trash`;
    case 'cut.restored':
      return `restored ${named('cut', event.data.cutId)} from the trash`;
    case 'file.trashed':
      return `moved ${named('file', event.data.fileId)} to the trash`;
    case 'file.restored':
      return `restored ${named('file', event.data.fileId)} from the trash`;
    case 'comment.trashed':
      return `moved a comment on ${named('file', event.data.fileId)} to the trash`;
    case 'comment.restored':
      return `restored a comment on ${named('file', event.data.fileId)} from the trash`;
    case 'file.reviewed':
      return event.data.state === null
        ? `withdrew their review of ${named('file', event.data.fileId)}`
        : `${event.data.state === 'approved' ? 'approved' : 'requested changes to'} ${named('file', event.data.fileId)}`;
    case 'review.requested':
      return `asked ${event.data.userIds.map((id) => nameOf(id) ?? 'a member').join(', ')} to review "${event.data.name}" v${event.data.version}`;
    case 'review.gate_passed':
      // The actor's change (a review, a resolved comment, the policy) is what got the version through.
      return `made "${event.data.name}" v${event.data.version} ready under the review policy (${event.data.review.approved} of ${event.data.policy.approvals} approvals)`;
  }
}

/** A time into a mix as musicians read it: `1:23.450`, `1:02:03.000`. */
export function clockTime(ms: number): string {
  const whole = Math.round(ms);
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor(whole / 60_000) % 60;
  const seconds = ((whole % 60_000) / 1000).toFixed(3).padStart(6, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}
