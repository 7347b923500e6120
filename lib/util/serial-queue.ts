/**
 * Tasks run one after another, in the order they were queued: a task starts
 * once every task queued before it has settled. A failed task rejects its own
 * caller's promise only; the queue goes on with the next. The index caches
 * (vector and keyword) run their catch-ups, own writes, merges and snapshots
 * through one each, so none of them sees another half done; syncs of a store, model loads
 * (transformers.js reads one global `env`), the embedding worker's requests and the desktop
 * app's secret-file writes run through theirs.
 */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Queues `task`; the promise settles as the task does. A task must not wait for a task queued after it. */
  run<R>(task: () => R | PromiseLike<R>): Promise<R> {
    const result = this.#tail.then(task);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /** Settles once every task queued so far has settled (never rejects). */
  async idle(): Promise<void> {
    await this.#tail;
  }
}
