// `band pull --previews` (§20): the listening previews of a cut's latest audio into a plain folder, at each
// series' path (or its name) with the extension .m4a, for listening on the road. Not a session folder: no
// manifest is written, so nothing of it is pushed back. A preview already there with its size is not fetched
// again, so a run after an interruption fetches what is missing.
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BandClient, CutWithFiles, FileRecord } from '@bandcollab/sdk';

export interface PreviewsPulled {
  fetched: string[];
  skipped: string[];
  /** Previews not made yet (pending) or that could not be made (failed). */
  notReady: string[];
  failed: { name: string; reason: string }[];
}

/** The local name of a file's preview: its series' path or its name, the extension replaced by .m4a. */
export function previewName(file: FileRecord): string {
  const base = (file.path ?? file.name.replace(/[/\\]/g, '_')).replace(/\.[^./]{1,5}$/, '');
  return `${base}.m4a`;
}

export async function pullPreviews(client: BandClient, cut: CutWithFiles, dir: string, jobs: number): Promise<PreviewsPulled> {
  const result: PreviewsPulled = { fetched: [], skipped: [], notReady: [], failed: [] };
  const latest = cut.files.filter((file) => file.type === 'CUT' && file.series.latest);
  const queue = latest.map((file) => ({ file, name: previewName(file) }));
  const root = path.resolve(dir);
  const one = async ({ file, name }: { file: FileRecord; name: string }): Promise<void> => {
    if (file.preview.status !== 'done') return void result.notReady.push(name);
    const target = path.resolve(root, name);
    // A path is relative and checked by the server; this keeps every preview inside the folder all the same.
    if (!target.startsWith(`${root}${path.sep}`)) return void result.failed.push({ name, reason: 'its path leads outside the folder' });
    const existing = await stat(target).catch(() => null);
    if (existing?.isFile() && existing.size === file.preview.bytes) return void result.skipped.push(name);
    try {
      await mkdir(path.dirname(target), { recursive: true });
      await client.files.downloadPreview(file.id, { to: target });
      result.fetched.push(name);
    } catch (error) {
      result.failed.push({ name, reason: (error as Error).message });
    }
  };
  const workers = Array.from({ length: Math.min(jobs, queue.length) }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await one(next);
  });
  await Promise.all(workers);
  return result;
}
