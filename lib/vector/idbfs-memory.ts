/**
 * A synchronous, in-memory stand-in for the single IndexedDB database that
 * hnswlib-wasm's Emscripten IDBFS mount (`/hnswlib-index`) talks to.
 *
 * Why: hnswlib-wasm can only save and load an index through files on its
 * Emscripten file system, and it does not export that file system (`Module.FS`
 * aborts). The one way files leave or enter it is IDBFS syncing, which reads
 * and writes an IndexedDB object store. By answering those IndexedDB calls from
 * memory, synchronously, `writeIndex()` hands us the index bytes before it
 * returns, and a sync in the other direction places bytes we supply on the file
 * system for `readIndex()`. Nothing is persisted here: persistence is the
 * engine's job (the snapshot goes into Dexie).
 *
 * Only the calls that Emscripten's IDBFS makes are implemented. Requests
 * complete as soon as their `onsuccess` handler is assigned (IDBFS assigns it
 * right after issuing the request); transactions complete on {@link IdbfsMemory.flush}
 * or at the next microtask, the same point where a real transaction auto-commits.
 */

/**
 * One file or directory record, in the shape IDBFS stores.
 * @example
 * memory.records.set('/hnswlib-index/f', { timestamp: new Date(), mode: REGULAR_FILE_MODE, contents: bytes });
 */
export interface IdbfsRecord {
  timestamp: Date;
  mode: number;
  contents?: Uint8Array;
}

type Handler = (event: { target: unknown }) => void;

/** A request that fires its success handler as soon as one is attached. */
class MemoryRequest {
  result: unknown;
  error: null = null;
  onerror: Handler | null = null;
  #onsuccess: Handler | null = null;

  constructor(result: unknown) {
    this.result = result;
  }

  get onsuccess(): Handler | null {
    return this.#onsuccess;
  }

  set onsuccess(handler: Handler | null) {
    this.#onsuccess = handler;
    handler?.({ target: this });
  }

  /** Calls the success handler again (cursor.continue()). */
  refire(): void {
    this.#onsuccess?.({ target: this });
  }
}

/**
 * Regular file mode bits (S_IFREG | 0666), as Emscripten's FS.isFile() expects.
 * @example
 * const record = { timestamp: new Date(), mode: REGULAR_FILE_MODE, contents: bytes };
 */
export const REGULAR_FILE_MODE = 0o100666;

/**
 * The in-memory database plus the `indexedDB`-shaped factory that exposes it.
 * @example
 * const memory = new IdbfsMemory('/hnswlib-index');
 * globalThis.indexedDB = memory.factory(realIndexedDB); // only while hnswlib-wasm starts
 * native.writeIndex('f');
 * memory.flush();
 * const bytes = memory.records.get('/hnswlib-index/f')?.contents;
 */
export class IdbfsMemory {
  /** Records by absolute path, exactly as IDBFS keys them. */
  readonly records = new Map<string, IdbfsRecord>();
  /** True once IDBFS has opened the database through {@link IdbfsMemory.factory}. */
  opened = false;
  readonly #dbName: string;
  #completions: (() => void)[] = [];

  constructor(dbName: string) {
    this.#dbName = dbName;
  }

  /**
   * An object to install as the global `indexedDB` while hnswlib-wasm initialises:
   * `open(dbName)` is answered from memory, every other call goes to `real`.
   * @example
   * Object.defineProperty(globalThis, 'indexedDB', { value: memory.factory(indexedDB), configurable: true });
   */
  factory(real: unknown): object {
    const realFactory = real as Record<string, unknown> | undefined;
    const forward =
      (name: string) =>
      (...args: unknown[]): unknown => {
        const fn = realFactory?.[name];
        if (typeof fn !== 'function') throw new TypeError(`indexedDB.${name} is not available`);
        return (fn as (...a: unknown[]) => unknown).apply(realFactory, args);
      };
    return {
      open: (name: string, version?: number): unknown => {
        if (name !== this.#dbName) return forward('open')(name, version);
        this.opened = true;
        return new MemoryRequest(this.#database());
      },
      deleteDatabase: forward('deleteDatabase'),
      databases: forward('databases'),
      cmp: forward('cmp'),
    };
  }

  /**
   * Completes every transaction still open, so a sync finishes before this returns.
   * @example
   * native.writeIndex('f'); memory.flush();
   */
  flush(): void {
    while (this.#completions.length > 0) {
      const pending = this.#completions;
      this.#completions = [];
      for (const complete of pending) complete();
    }
  }

  #database(): object {
    const contains = { contains: () => true };
    return {
      objectStoreNames: contains,
      close: () => undefined,
      transaction: () => this.#transaction(),
    };
  }

  #transaction(): object {
    const records = this.records;
    let done = false;
    const tx = {
      onerror: null as Handler | null,
      oncomplete: null as Handler | null,
      objectStore: () => ({
        indexNames: { contains: () => true },
        get: (key: string) => new MemoryRequest(records.get(key)),
        put: (value: IdbfsRecord, key: string) => {
          records.set(key, value);
          return new MemoryRequest(key);
        },
        delete: (key: string) => {
          records.delete(key);
          return new MemoryRequest(undefined);
        },
        index: () => ({ openKeyCursor: () => keyCursor(records) }),
      }),
    };
    const complete = (): void => {
      if (done) return;
      done = true;
      tx.oncomplete?.({ target: tx });
    };
    this.#completions.push(complete);
    queueMicrotask(() => {
      this.flush();
    });
    return tx;
  }
}

/** A key cursor over the `timestamp` index: primaryKey is the path, key the timestamp. */
function keyCursor(records: Map<string, IdbfsRecord>): MemoryRequest {
  const entries = [...records.entries()].sort((a, b) => a[1].timestamp.getTime() - b[1].timestamp.getTime());
  let position = 0;
  const request = new MemoryRequest(null);
  const at = (i: number): unknown => {
    const entry = entries[i];
    if (entry === undefined) return null;
    return {
      primaryKey: entry[0],
      key: entry[1].timestamp,
      continue: () => {
        position += 1;
        request.result = at(position);
        request.refire();
      },
    };
  };
  request.result = at(0);
  return request;
}
