// `--limit <n>` and `--all`, alike on every command that prints a list the API answers in pages (comments,
// webhook deliveries): the SDK's PagedList fetches the pages, this decides how many items to take. A list cut
// short says so on stderr, so a script reading stdout gets what it asked for and a person knows there is more.
import type { Command } from 'commander';
import type { Paged, PagedList } from '@bandcollab/sdk';
import { usageError } from './exit-codes.js';
import type { Output } from './render.js';

export interface PagingFlags {
  limit?: number;
  all?: boolean;
}

/** What a command takes when given neither flag: every item, or the first `n`. */
export type DefaultLimit = number | 'all';

/** Adds --limit and --all to `command`, the default named in the help. */
export function withPaging(command: Command, defaultLimit: DefaultLimit): Command {
  const fallback = defaultLimit === 'all' ? 'default: all' : `default ${defaultLimit}`;
  return command.option('--limit <n>', `at most n items (${fallback})`, limitOf).option('--all', 'every item, however many pages');
}

/** The items the flags ask for (read from each page by `itemsOf`), the last page read, and whether any were left out. */
export async function takeItems<Item, Page extends Paged>(
  list: PagedList<Item, Page>,
  itemsOf: (page: Page) => Item[],
  flags: PagingFlags,
  defaultLimit: DefaultLimit,
): Promise<{ items: Item[]; lastPage: Page | undefined; leftOut: boolean }> {
  if (flags.all && flags.limit !== undefined) throw usageError('--all and --limit ask for different things: give one');
  const limit = limitAskedFor(flags, defaultLimit);
  const items: Item[] = [];
  let lastPage: Page | undefined;
  // Pages are fetched as the loop reaches them: leaving it early asks for no further page.
  for await (const page of list.pages()) {
    lastPage = page;
    const pageItems = itemsOf(page);
    const room = limit - items.length;
    items.push(...pageItems.slice(0, room));
    if (items.length === limit) return { items, lastPage, leftOut: pageItems.length > room || page.nextCursor !== null };
  }
  return { items, lastPage, leftOut: false };
}

/** Says on stderr that `shown` items are not the whole list. */
export function noteLeftOut(out: Output, shown: number, noun: string): void {
  out.info(`the first ${shown} ${noun}; --limit <n> or --all for more`);
}

function limitOf(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw usageError(`--limit must be a whole number from 1, not "${value}"`);
  return number;
}

/** The most items the flags ask for (Infinity: every one). */
function limitAskedFor(flags: PagingFlags, defaultLimit: DefaultLimit): number {
  return flags.all ? Infinity : (flags.limit ?? (defaultLimit === 'all' ? Infinity : defaultLimit));
}

/** Pages no longer than what the flags ask for, and no longer than the `largest` page the server answers. */
export function pageSize(flags: PagingFlags, defaultLimit: DefaultLimit, largest: number): number {
  return Math.min(limitAskedFor(flags, defaultLimit), largest);
}
