import { describe, expect, it } from 'vitest';
import { IdbfsMemory, REGULAR_FILE_MODE } from '../../lib/vector/idbfs-memory.js';

interface Req {
  result: unknown;
  onsuccess: ((e: { target: Req }) => void) | null;
}
interface Tx {
  oncomplete: (() => void) | null;
  objectStore(name: string): {
    put(v: unknown, k: string): Req;
    get(k: string): Req;
    delete(k: string): Req;
    index(name: string): { openKeyCursor(): Req };
  };
}
interface Db {
  transaction(stores: string[], mode: string): Tx;
}

function open(factory: object, name: string): Db {
  let db: Db | undefined;
  const request = (factory as { open(n: string, v: number): Req }).open(name, 21);
  request.onsuccess = () => {
    db = request.result as Db;
  };
  if (db === undefined) throw new TypeError('open did not complete synchronously');
  return db;
}

describe('IdbfsMemory', () => {
  it('factory() answers open() of its database synchronously and stores records in memory', () => {
    const memory = new IdbfsMemory('/mount');
    const db = open(memory.factory(undefined), '/mount');
    expect(memory.opened).toBe(true);
    const tx = db.transaction(['FILE_DATA'], 'readwrite');
    let completed = false;
    tx.oncomplete = () => {
      completed = true;
    };
    const record = { timestamp: new Date(5), mode: REGULAR_FILE_MODE, contents: new Uint8Array([9]) };
    let stored = false;
    tx.objectStore('FILE_DATA').put(record, '/mount/f').onsuccess = () => {
      stored = true;
    };
    expect(stored).toBe(true);
    expect(memory.records.get('/mount/f')).toBe(record);
    expect(completed).toBe(false);
    memory.flush();
    expect(completed).toBe(true);
  });

  it('factory() lists keys by timestamp through a key cursor, the way IDBFS reads them', () => {
    const memory = new IdbfsMemory('/mount');
    memory.records.set('/mount/b', { timestamp: new Date(20), mode: REGULAR_FILE_MODE });
    memory.records.set('/mount/a', { timestamp: new Date(10), mode: REGULAR_FILE_MODE });
    const db = open(memory.factory(undefined), '/mount');
    const seen: string[] = [];
    const request = db.transaction(['FILE_DATA'], 'readonly').objectStore('FILE_DATA').index('timestamp').openKeyCursor();
    request.onsuccess = (event) => {
      const cursor = event.target.result as { primaryKey: string; continue(): void } | null;
      if (cursor === null) return;
      seen.push(cursor.primaryKey);
      cursor.continue();
    };
    expect(seen).toEqual(['/mount/a', '/mount/b']);
  });

  it('factory() forwards every other database to the real indexedDB', async () => {
    const memory = new IdbfsMemory('/mount');
    const factory = memory.factory(indexedDB) as IDBFactory;
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const request = factory.open('engram-idbfs-forward', 1);
      request.onsuccess = () => {
        resolve(request.result);
      };
      request.onerror = () => {
        reject(request.error ?? new TypeError('open failed'));
      };
    });
    expect(db.name).toBe('engram-idbfs-forward');
    db.close();
    expect(memory.opened).toBe(false);
    expect(() => (memory.factory(undefined) as IDBFactory).open('other')).toThrow(TypeError);
  });
});
