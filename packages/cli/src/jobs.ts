/**
 * Runs `work` on every item, at most `jobs` at a time, in the items' order of starting. A failing item does
 * not stop the others: its error is kept at its index (undefined where the work succeeded).
 */
export async function runJobs<T>(items: readonly T[], jobs: number, work: (item: T, index: number) => Promise<void>): Promise<unknown[]> {
  const errors: unknown[] = new Array(items.length).fill(undefined);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        await work(items[index]!, index);
      } catch (error) {
        errors[index] = error ?? new Error('failed');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
  return errors;
}
