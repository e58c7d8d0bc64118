// Projects, vibes, cuts and files are named by id or by name: names are compared case-insensitively and
// are unique within their parent (a project's vibes, a vibe's cuts). An ambiguous name is a usage error
// that lists the candidates; an unknown one is "not found" (exit 6).
import type { BandClient, Comment, CutWithFiles, FileRecord, Member, ProjectDetail, VibeWithCuts } from '@bandcollab/sdk';
import { CliError, notFoundError, usageError } from './exit-codes.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isId(ref: string): boolean {
  return UUID.test(ref);
}

export interface Named {
  id: string;
  name: string;
}

export interface CutRef {
  cut: string;
  vibe?: string;
  project?: string;
}

/**
 * The one item whose id is `ref` or whose name equals it case-insensitively. `label` describes a candidate
 * when several match (e.g. with its vibe's name).
 */
export function pick<T extends Named>(items: readonly T[], ref: string, what: string, where: string, label: (item: T) => string = (item) => item.name): T {
  const byId = items.find((item) => item.id === ref);
  if (byId) return byId;
  const wanted = ref.trim().toLowerCase();
  const lower = (item: T) => item.name.toLowerCase();
  // The whole name first; then the name without its extension (`mix` for mix.wav), then a prefix of it, as git
  // takes a short SHA: each only when it names one.
  let matches = items.filter((item) => lower(item) === wanted);
  for (const looser of [(item: T) => lower(item).replace(/\.[^.]*$/, '') === wanted, (item: T) => lower(item).startsWith(wanted)]) {
    if (matches.length > 0 || wanted === '') break;
    matches = items.filter(looser);
  }
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    const near = items.filter((item) => wanted !== '' && lower(item).includes(wanted)).slice(0, 3);
    const hint = near.length > 0 ? `; did you mean ${near.map((item) => `"${item.name}"`).join(' or ')}?` : '';
    throw notFoundError(`no ${what} named "${ref}" ${where}${hint}`);
  }
  const candidates = matches.map((item) => `  ${label(item)}  ${item.id}`).join('\n');
  throw usageError(`"${ref}" names ${matches.length} ${what}s ${where}; use an id:\n${candidates}`);
}

export async function projectId(client: BandClient, ref: string): Promise<string> {
  if (isId(ref)) return ref;
  return pick(await client.projects.list(), ref, 'project', 'among your projects').id;
}

export async function projectDetail(client: BandClient, ref: string): Promise<ProjectDetail> {
  return client.projects.get(await projectId(client, ref));
}

/** A vibe by id, or by name within --project. */
export async function resolveVibe(client: BandClient, ref: string, project: string | undefined): Promise<VibeWithCuts> {
  if (isId(ref)) return client.vibes.get(ref);
  if (!project) throw usageError(`to find vibe "${ref}" by name, name its project with --project (or give the vibe's id)`);
  return vibeIn(await projectDetail(client, project), ref);
}

function vibeIn(detail: ProjectDetail, ref: string): VibeWithCuts {
  return pick(detail.vibes, ref, 'vibe', `in project "${detail.name}"`);
}

/**
 * A cut by id, or by name within --vibe (or within the whole --project when no vibe is named). A cut named
 * that does not exist yet is "not found" with the command that makes it.
 */
export async function resolveCut(client: BandClient, ref: CutRef): Promise<CutWithFiles> {
  if (isId(ref.cut)) return client.cuts.get(ref.cut);
  try {
    if (ref.vibe && isId(ref.vibe)) {
      const vibe = await client.vibes.get(ref.vibe);
      return pick(vibe.cuts, ref.cut, 'cut', `in vibe "${vibe.name}"`);
    }
    if (!ref.project) throw usageError(`to find cut "${ref.cut}" by name, name its project with --project (and its vibe with --vibe), or give the cut's id`);
    return cutIn(await projectDetail(client, ref.project), ref.cut, ref.vibe);
  } catch (error) {
    if (!(error instanceof CliError) || !error.message.startsWith(`no cut named `)) throw error;
    const where = [`--vibe ${shellWord(ref.vibe ?? '<vibe>')}`, ...(ref.project ? [`--project ${shellWord(ref.project)}`] : [])];
    throw notFoundError(`${error.message}; to make it: band cut create ${shellWord(ref.cut)} ${where.join(' ')}`);
  }
}

/** A word as it is typed in a shell: quoted when it has spaces or anything a shell would read. */
function shellWord(word: string): string {
  return /^[\w.,:@%+=/-]+$/.test(word) ? word : `"${word.replace(/(["\\$`])/g, '\\$1')}"`;
}

function cutIn(detail: ProjectDetail, cut: string, vibe: string | undefined): CutWithFiles {
  if (vibe) {
    const found = vibeIn(detail, vibe);
    return pick(found.cuts, cut, 'cut', `in vibe "${found.name}"`);
  }
  const all = detail.vibes.flatMap((v) => v.cuts.map((c) => ({ id: c.id, name: c.name, cut: c, label: `${v.name} / ${c.name}` })));
  return pick(all, cut, 'cut', `in project "${detail.name}" (add --vibe)`, (entry) => entry.label).cut;
}

/** A file by id, or by name within the cut named by the flags. */
export async function resolveFile(client: BandClient, ref: string, cut: Omit<CutRef, 'cut'> & { cut?: string }): Promise<FileRecord> {
  if (isId(ref)) return client.files.get(ref);
  if (!cut.cut) throw usageError(`to find file "${ref}" by name, name its cut with --cut (or give the file's id)`);
  const found = await resolveCut(client, { ...cut, cut: cut.cut });
  // A name stands for its series' latest version: the versions of a mix share their display name.
  return pick(
    found.files.filter((file) => file.series.latest),
    ref,
    'file',
    `in cut "${found.name}"`,
  );
}

/** A member of the project by email, user id or name. */
export function memberIn(detail: ProjectDetail, ref: string): Member {
  const email = ref.trim().toLowerCase();
  const byEmailOrId = detail.members.find((m) => m.email.toLowerCase() === email || m.userId === ref);
  if (byEmailOrId) return byEmailOrId;
  const named = detail.members.map((m) => ({ id: m.userId, name: m.name, member: m }));
  return pick(named, ref, 'member', `in project "${detail.name}"`, (entry) => `${entry.name} <${entry.member.email}>`).member;
}

/** How a comment's id is shown in human output: its first characters, which `commentId` takes back. */
export const SHORT_ID_LENGTH = 8;

export function shortId(id: string): string {
  return id.slice(0, SHORT_ID_LENGTH);
}

/**
 * A comment by its id or, as git takes a short SHA, by the first characters of it (4 or more, as
 * `band comment list` shows them): looked up among the comments and replies of the caller's projects,
 * and taken only when one comment starts with them.
 */
export async function commentId(client: BandClient, ref: string): Promise<string> {
  if (isId(ref)) return ref;
  const prefix = ref.trim().toLowerCase();
  if (!/^[0-9a-f]{4}[0-9a-f-]{0,32}$/.test(prefix)) throw usageError(`"${ref}" is not a comment id (the id, or its first characters as band comment list shows them)`);
  const matches: Comment[] = [];
  for (const project of await client.projects.list()) {
    for await (const thread of client.comments.listOfProject(project.id)) {
      for (const comment of [thread, ...(thread.replies ?? [])]) if (comment.id.startsWith(prefix)) matches.push(comment);
    }
  }
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) throw notFoundError(`no comment of your projects has an id starting with ${prefix}`);
  throw usageError(`${prefix} starts the ids of ${matches.length} comments; give more of it:\n${matches.map((c) => `  ${c.id}  ${c.author.name}`).join('\n')}`);
}
