// How band shows the trash to people (trash).
import type { RestoredTrash, TrashItem } from '@bandcollab/sdk';
import { formatTime, type Output } from '../render.js';

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
