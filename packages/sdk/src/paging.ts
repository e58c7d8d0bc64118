/**
 * The one list convention of the API for lists that grow (comments, a STEM ZIP's entries, webhook deliveries):
 * `?limit&cursor` in, `{<items>, nextCursor}` out, `nextCursor` null on the last page. Bounded lists (a project's
 * members, webhooks — at most 20 —, the trash) stay bare arrays.
 */
export interface Paged {
  nextCursor: string | null;
}

/** A whole list: every item, each page fetched as iteration reaches it; `pages()` gives the pages themselves. */
export interface PagedList<Item, Page extends Paged> extends AsyncIterable<Item> {
  pages(): AsyncIterable<Page>;
}

/** The list whose pages `fetchPage` answers (no cursor: the first), with the items `itemsOf` reads from a page. */
export function pagedList<Item, Page extends Paged>(fetchPage: (cursor: string | undefined) => Promise<Page>, itemsOf: (page: Page) => Item[]): PagedList<Item, Page> {
  async function* pages(): AsyncGenerator<Page> {
    let cursor: string | undefined;
    do {
      const page = await fetchPage(cursor);
      yield page;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
  return {
    pages,
    async *[Symbol.asyncIterator]() {
      for await (const page of pages()) yield* itemsOf(page);
    },
  };
}
