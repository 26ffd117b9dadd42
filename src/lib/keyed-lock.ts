/**
 * @module One task at a time per key, in call order: for read-then-write steps on one record that must
 * not interleave (a model swap queued while the session's turn ends). A failing task does not hold up
 * the next one; keys with nothing waiting are forgotten.
 */

export interface KeyedLock {
  /** Runs `task` once every task queued before it under `key` has settled; resolves or rejects as it does. */
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
}

export function createKeyedLock(): KeyedLock {
  const tails = new Map<string, Promise<void>>();
  return {
    run(key, task) {
      const result = (tails.get(key) ?? Promise.resolve()).then(task);
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
  };
}
