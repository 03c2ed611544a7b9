/**
 * Runs `work` on every item with at most `concurrency` calls under way at a
 * time and resolves with the results in the items' order. The first failure
 * rejects the whole and no further items are started. Written here rather
 * than taken from p-map/p-limit: it is the dozen lines below.
 */
export async function mapConcurrently<T, R>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  return results;
}
