// How band shows storage use to people (storage, storage --all).
import type { AdminStorage, IncompleteUploads, LargestFile, StorageBreakdown, StorageQuota, StorageStats } from '@bandcollab/sdk';
import { counted, formatBytes, type Output } from '../render.js';
import { TYPE_LABELS } from './files.js';

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
  if (report.largestFiles.length > 0) lines.push('', out.bold('Largest files'), largestFilesTable(out, report.largestFiles));
  return lines.join('\n');
}

/** Files by size, largest first: the site's (a site ADMIN's report) or a project's. */
export function largestFilesTable(out: Output, files: readonly LargestFile[]): string {
  return out.table(
    files,
    [
      { header: 'SIZE', value: (file) => formatBytes(file.size) },
      { header: 'NAME', value: (file) => file.name },
      { header: 'TYPE', value: (file) => TYPE_LABELS[file.type] },
      { header: 'PROJECT', value: (file) => file.project.name },
      { header: 'UPLOADED BY', value: (file) => file.uploadedBy?.email ?? 'former member' },
      { header: 'ID', value: (file) => file.id },
    ],
    'No files',
  );
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
