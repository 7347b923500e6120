/**
 * Opening the Dexie store: schema, device id and the schema version in `meta`.
 */
import { ValidationError } from '../errors.js';
import { bumpGeneration, GENERATION_KEY } from '../store/generation.js';
import { ALL_TABLES, EngramDb, SCHEMA_VERSION } from '../store/schema.js';
import { storeError } from '../store/write.js';
import { newId } from '../util/id.js';
import { ANALYZER_KEY } from './keywords/keyword-reindex.js';

/** Opens (or creates) the database `name` and returns it with this device's id. */
export async function openStore(name: string): Promise<{ db: EngramDb; deviceId: string }> {
  const db = new EngramDb(name);
  try {
    await db.open();
    const deviceId = await db.transaction('rw', db.meta, async () => {
      const schema = await db.meta.get('schemaVersion');
      const stored = schema?.value;
      if (typeof stored === 'number' && stored > SCHEMA_VERSION) {
        throw new ValidationError(
          'name',
          `store "${name}" has schema version ${stored}, newer than this engram (${SCHEMA_VERSION})`,
        );
      }
      if (stored !== SCHEMA_VERSION) await db.meta.put({ key: 'schemaVersion', value: SCHEMA_VERSION });
      const device = (await db.meta.get('deviceId'))?.value;
      if (typeof device === 'string') return device;
      const id = newId();
      await db.meta.put({ key: 'deviceId', value: id });
      return id;
    });
    return { db, deviceId };
  } catch (e) {
    db.close();
    throw storeError(e, `opening store "${name}"`);
  }
}

/**
 * Empties every table but the store's identity (schema version, device id,
 * embedder, analyzer) and bumps the store generation, so every other instance
 * on this store reloads its indexes.
 */
export async function resetStore(db: EngramDb): Promise<void> {
  const keep = ['schemaVersion', 'deviceId', 'embedder', ANALYZER_KEY, GENERATION_KEY];
  try {
    await db.transaction('rw', [...ALL_TABLES], async () => {
      for (const table of ALL_TABLES) {
        if (table === 'meta') await db.meta.where('key').noneOf(keep).delete();
        else await db.table(table).clear();
      }
      await bumpGeneration(db);
    });
  } catch (e) {
    throw storeError(e, 'reset');
  }
}
