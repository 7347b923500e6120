/**
 * IndexedDB as promises for the peers' pages, and one value in its own
 * IndexedDB database, written and read whole: where a peer persists through a
 * snapshot object it hands out (Orama's save()). idbPut() resolves when its
 * transaction has committed (durable).
 */

/** Resolves with the request's result, or rejects with its error. */
export function requested<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => {
      resolve(req.result);
    };
    req.onerror = () => {
      reject(req.error ?? new DOMException('request failed'));
    };
  });
}

/** Resolves once the transaction has committed; rejects when it fails or aborts. */
export function committed(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => {
      resolve();
    };
    tx.onerror = () => {
      reject(tx.error ?? new DOMException('transaction failed'));
    };
    tx.onabort = () => {
      reject(tx.error ?? new DOMException('transaction aborted'));
    };
  });
}

function openDb(name: string): Promise<IDBDatabase> {
  const req = indexedDB.open(name, 1);
  req.onupgradeneeded = () => req.result.createObjectStore('v');
  return requested(req);
}

/** Writes `value` under database `name`, resolving once the transaction commits (the browser's default durability, as engram's Dexie writes). */
export async function idbPut(name: string, value: unknown): Promise<void> {
  const db = await openDb(name);
  const tx = db.transaction('v', 'readwrite');
  tx.objectStore('v').put(value, 'value');
  await committed(tx);
  db.close();
}

/** Reads the value {@link idbPut} wrote under `name`. */
export async function idbGet<T>(name: string): Promise<T> {
  const db = await openDb(name);
  const value = (await requested(db.transaction('v', 'readonly').objectStore('v').get('value'))) as T | undefined;
  db.close();
  if (value === undefined) throw new RangeError(`nothing stored in ${name}`);
  return value;
}
