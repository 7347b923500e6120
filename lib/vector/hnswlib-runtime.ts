/**
 * Loading hnswlib-wasm: the only file that imports it, lazily, so importing the
 * library has no side effects. One runtime per JS realm; its Emscripten file
 * system (IDBFS) is pointed at an in-memory store so that index files move in
 * and out of WASM without touching the user's IndexedDB.
 */
import { IndexError } from '../errors.js';
import { IdbfsMemory } from './idbfs-memory.js';

/** hnswlib-wasm's IDBFS mount point (fixed in its C++ wrapper). */
export const MOUNT = '/hnswlib-index';

/** The parts of hnswlib-wasm's HierarchicalNSW binding that are used here. */
export interface NativeHnsw {
  initIndex(maxElements: number, m: number, efConstruction: number, randomSeed: number): void;
  readIndex(filename: string, maxElements: number): unknown;
  writeIndex(filename: string): unknown;
  resizeIndex(newMaxElements: number): void;
  addPoint(point: Float32Array, label: number, replaceDeleted: boolean): void;
  addPoints(points: Float32Array[], labels: number[], replaceDeleted: boolean): void;
  markDelete(label: number): void;
  searchKnn(query: Float32Array, k: number, filter: ((label: number) => boolean) | undefined): { distances: number[]; neighbors: number[] };
  getPoint(label: number): ArrayLike<number>;
  setEfSearch(ef: number): void;
  delete(): void;
}

export interface HnswLibrary {
  HierarchicalNSW: new (space: 'cosine', dimensions: number, autoSaveFilename: string) => NativeHnsw;
  EmscriptenFileSystemManager: { syncFS(populateFromStore: boolean, callback: undefined): void };
  getExceptionMessage?: (e: unknown) => [string, string];
}

/** One loaded hnswlib-wasm module and the in-memory store behind its file system. */
export interface Runtime {
  lib: HnswLibrary;
  files: IdbfsMemory;
  nextFile: number;
}

/** One runtime per JS realm, shared by every copy of this module, because hnswlib-wasm itself caches its module per realm. */
const RUNTIME_KEY = Symbol.for('engram.index.hnswlib-runtime');

/** Calls into WASM, turning anything it throws into IndexError with hnswlib's own message when there is one. */
export function wasmCall<T>(runtime: Runtime, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    let detail = e instanceof Error ? e.message : String(e);
    if (typeof WebAssembly.Exception === 'function' && e instanceof WebAssembly.Exception) {
      try {
        detail = runtime.lib.getExceptionMessage?.(e).join(': ') ?? detail;
      } catch {
        // Keep the generic text.
      }
    }
    throw new IndexError(`hnswlib ${what} failed: ${detail}`, { cause: e });
  }
}

/** Runs an IDBFS sync from the in-memory store into the WASM file system, to completion. */
export function syncFromStore(runtime: Runtime): void {
  runtime.lib.EmscriptenFileSystemManager.syncFS(true, undefined);
  runtime.files.flush();
}

/** Deletes a transfer file from the store and, by syncing, from the WASM file system. */
export function removeFile(runtime: Runtime, name: string): void {
  runtime.files.records.delete(`${MOUNT}/${name}`);
  syncFromStore(runtime);
}

export function loadRuntime(): Promise<Runtime> {
  const slot = globalThis as unknown as Record<symbol, Promise<Runtime> | undefined>;
  let pending = slot[RUNTIME_KEY];
  if (pending === undefined) {
    pending = startRuntime().catch((cause: unknown) => {
      slot[RUNTIME_KEY] = undefined;
      throw cause instanceof IndexError ? cause : new IndexError('could not load hnswlib-wasm', { cause });
    });
    slot[RUNTIME_KEY] = pending;
  }
  return pending;
}

/**
 * Loads hnswlib-wasm with its IDBFS mount pointed at an {@link IdbfsMemory}:
 * the global `indexedDB` is swapped for a forwarding shim only while the module
 * starts (its file system opens its database then and keeps the handle).
 * Browsers and workers import the package entry; Node imports the built file
 * directly (the package has only a `module` field) and needs a temporary
 * `window`, because the build targets the web.
 */
async function startRuntime(): Promise<Runtime> {
  const files = new IdbfsMemory(MOUNT);
  const scope = globalThis as unknown as Record<string, unknown>;
  const inBrowser = typeof scope['window'] === 'object' || typeof scope['importScripts'] === 'function';
  const undo: (() => void)[] = [];
  if (!inBrowser) {
    scope['window'] = globalThis;
    undo.push(() => Reflect.deleteProperty(globalThis, 'window'));
  }
  const own = Object.getOwnPropertyDescriptor(globalThis, 'indexedDB');
  Object.defineProperty(globalThis, 'indexedDB', { value: files.factory(scope['indexedDB']), configurable: true, writable: true });
  undo.push(() => {
    if (own === undefined) Reflect.deleteProperty(globalThis, 'indexedDB');
    else Object.defineProperty(globalThis, 'indexedDB', own);
  });
  let lib: HnswLibrary;
  try {
    const module = (inBrowser ? await import('hnswlib-wasm') : await import('hnswlib-wasm/dist/hnswlib.js')) as unknown as {
      loadHnswlib: () => Promise<unknown>;
    };
    lib = (await module.loadHnswlib()) as HnswLibrary;
  } finally {
    for (const step of undo.reverse()) step();
  }
  if (!files.opened) {
    throw new IndexError('hnswlib-wasm was initialised before engram loaded it, so index snapshots cannot be moved in or out');
  }
  return { lib, files, nextFile: 0 };
}
