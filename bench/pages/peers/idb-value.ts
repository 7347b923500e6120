/**
 * One value in its own IndexedDB database, written and read whole: where a
 * peer persists through a snapshot object it hands out (Orama's save()).
 * put() resolves when its transaction has committed (durable).
 */

function openDb(name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => req.result.createObjectStore('v');
    req.onsuccess = () => {
      resolve(req.result);
    };
    req.onerror = () => {
      reject(req.error ?? new DOMException('open failed'));
    };
  });
}

/** Writes `value` under database `name`, resolving once the transaction commits (the browser's default durability, as engram's Dexie writes). */
export async function idbPut(name: string, value: unknown): Promise<void> {
  const db = await openDb(name);
  await new Promise<void>((resolve, reject) => {
    const tx = db.transaction('v', 'readwrite');
    tx.objectStore('v').put(value, 'value');
    tx.oncomplete = () => {
      resolve();
    };
    tx.onerror = () => {
      reject(tx.error ?? new DOMException('put failed'));
    };
  });
  db.close();
}

/** Reads the value {@link idbPut} wrote under `name`. */
export async function idbGet<T>(name: string): Promise<T> {
  const db = await openDb(name);
  const value = await new Promise<T>((resolve, reject) => {
    const req = db.transaction('v', 'readonly').objectStore('v').get('value');
    req.onsuccess = () => {
      resolve(req.result as T);
    };
    req.onerror = () => {
      reject(req.error ?? new DOMException('get failed'));
    };
  });
  db.close();
  if (value === undefined) throw new RangeError(`nothing stored in ${name}`);
  return value;
}
