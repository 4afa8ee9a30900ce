/**
 * Maps items through an async function with up to `concurrency` calls in flight, and
 * yields the results in the items' order. A failure is thrown when its turn comes.
 */
export async function* orderedMap<T, R>(
  items: Iterable<T>,
  concurrency: number,
  work: (item: T) => Promise<R>,
): AsyncGenerator<R> {
  const iterator = items[Symbol.iterator]();
  const window: Promise<R>[] = [];
  const fill = () => {
    while (window.length < concurrency) {
      const next = iterator.next();
      if (next.done) return;
      const promise = work(next.value);
      promise.catch(() => {}); // surfaced when awaited in order
      window.push(promise);
    }
  };
  fill();
  while (window.length > 0) {
    const result = await window.shift()!;
    fill();
    yield result;
  }
}
