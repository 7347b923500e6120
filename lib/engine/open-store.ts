/**
 * Opening the Dexie store: schema, device id and the schema version in `meta`.
 */
import { KeyError, ValidationError } from '../errors.js';
import {
  AT_REST_KEY,
  bulkKeyOf,
  createAtRestKey,
  readStoredHeader,
  unlockAtRestKey,
  type AtRestEncryption,
  type AtRestHeader,
} from '../store/at-rest-key.js';
import { loadFreshness } from '../store/freshness-snapshot.js';
import { bumpGeneration, GENERATION_KEY } from '../store/generation.js';
import { RowCipher } from '../store/row-cipher.js';
import { RowSealing } from '../store/row-sealing.js';
import type { MetaRow } from '../store/rows.js';
import { ALL_TABLES, EngramDb, SCHEMA_VERSION } from '../store/schema.js';
import { storeError } from '../store/store-error.js';
import { newId } from '../util/id.js';
import { ANALYZER_KEY } from './keywords/keyword-reindex.js';

/** A key header of an older format to replace as the store opens (at-rest-key.ts HEADER_FORMAT): as read, and its replacement. */
interface HeaderUpgrade {
  from: unknown;
  to: AtRestHeader;
}

/**
 * The keys of the store `name` (undefined for a plain one), and the key header to
 * write when `encryption` creates it. A store is created encrypted or plain and
 * stays so: the wrong kind of opening is a KeyError before anything is read
 * beyond the header or written.
 */
async function storeKeys(
  name: string,
  encryption: AtRestEncryption | undefined,
): Promise<{ sealing?: RowSealing; header?: AtRestHeader; upgrade?: HeaderUpgrade }> {
  let stored: Awaited<ReturnType<typeof readStoredHeader>>;
  try {
    stored = await readStoredHeader(name);
  } catch (e) {
    throw storeError(e, `opening store "${name}"`);
  }
  if (stored.header !== undefined) return encryptedStoreKeys(name, encryption, stored.header);
  if (stored.sealed)
    throw new KeyError('unsupported', `store "${name}" holds sealed rows but no key header: it cannot be opened`);
  if (encryption === undefined) return {};
  if (stored.created)
    throw new KeyError(
      'not-encrypted',
      `store "${name}" was made without encryption; it cannot be opened with a key or passphrase`,
    );
  const { header, storeId, dataKey } = await createAtRestKey(encryption);
  return { sealing: await sealingOf(storeId, dataKey), header };
}

/** The keys of the encrypted store `name` opened from its key `header`, and the header's upgrade when it is of an older format. */
async function encryptedStoreKeys(
  name: string,
  encryption: AtRestEncryption | undefined,
  header: unknown,
): Promise<{ sealing: RowSealing; upgrade?: HeaderUpgrade }> {
  if (encryption === undefined)
    throw new KeyError('key-needed', `store "${name}" is encrypted: open it with its key or passphrase`);
  const { storeId, dataKey, upgraded } = await unlockAtRestKey(encryption, header);
  const sealing = await sealingOf(storeId, dataKey);
  return upgraded === undefined ? { sealing } : { sealing, upgrade: { from: header, to: upgraded } };
}

/**
 * Makes every later open of `db` (Dexie reopens a store on its next use after another connection
 * asked to upgrade it: a conversion, store-conversion.ts) refuse with a KeyError when the store is
 * no longer of the kind this instance opened: a plain instance never writes a plain row into a
 * store encrypted since, nor an encrypted one sealed rows into a store decrypted or re-keyed since.
 * The first open is checked by storeKeys() already.
 */
function guardStoreKind(db: EngramDb, name: string): void {
  let opened = false;
  db.on(
    'ready',
    async (vip) => {
      if (!opened) {
        opened = true;
        return;
      }
      // The store as `vip` reads it (through the sealing when there is one): `db` waits for this open.
      const meta = vip.table<MetaRow, string>('meta');
      const header = (await meta.get(AT_REST_KEY))?.value as { storeId?: unknown } | undefined;
      checkSameKind(name, db.sealing, header);
    },
    true,
  );
}

/** Throws a KeyError when the key header `header` read at a reopen says the store is no longer of the kind `sealing` opened. */
function checkSameKind(name: string, sealing: RowSealing | undefined, header: { storeId?: unknown } | undefined): void {
  if (sealing === undefined && header !== undefined)
    throw new KeyError('key-needed', `store "${name}" was encrypted by another instance; open it again with its key`);
  if (sealing !== undefined && header === undefined)
    throw new KeyError(
      'not-encrypted',
      `store "${name}" was decrypted by another instance; open it again without a key`,
    );
  if (sealing !== undefined && header?.storeId !== sealing.storeId)
    throw new KeyError('wrong-key', `store "${name}" was encrypted again by another instance; open it again`);
}

/**
 * Replaces the key header `upgrade.from` with `upgrade.to` (the same key and store id, the current
 * format, so an older engram refuses the store instead of misreading the rows this one writes), in
 * the open's transaction, unless another instance changed it since it was read (a new key, or the
 * same upgrade made first): that header stands.
 */
async function upgradeHeader(db: EngramDb, upgrade: HeaderUpgrade): Promise<void> {
  const current = (await db.meta.get(AT_REST_KEY))?.value as { wrapped?: unknown } | undefined;
  if (current?.wrapped !== (upgrade.from as { wrapped?: unknown }).wrapped) return;
  await db.meta.put({ key: AT_REST_KEY, value: upgrade.to });
}

/** The refusal of a store made by a newer engram. */
function newerSchema(name: string, stored: number): ValidationError {
  return new ValidationError(
    'name',
    `store "${name}" has schema version ${stored}, newer than this engram (${SCHEMA_VERSION})`,
  );
}

/**
 * The device id of a store that needs nothing written at open (its schema version current, its
 * device id made, no key header to write), read in one read-only transaction: the usual open,
 * which in an encrypted store then does not read the freshness head a write transaction reads
 * (row-sealing.ts). Undefined when something is to be written.
 */
async function knownDevice(db: EngramDb, name: string, header: AtRestHeader | undefined): Promise<string | undefined> {
  if (header !== undefined) return undefined;
  const [schema, device] = await db.transaction('r', db.meta, () => db.meta.bulkGet(['schemaVersion', 'deviceId']));
  const stored = schema?.value;
  if (typeof stored === 'number' && stored > SCHEMA_VERSION) throw newerSchema(name, stored);
  const id = device?.value;
  return stored === SCHEMA_VERSION && typeof id === 'string' ? id : undefined;
}

/**
 * The writes of an open, in one transaction: the key header of a new encrypted store, an older
 * header upgraded, the schema version; returns the device id (made when there is none).
 */
function writeOpenRecords(
  db: EngramDb,
  name: string,
  { header, upgrade }: { header: AtRestHeader | undefined; upgrade: HeaderUpgrade | undefined },
): Promise<string> {
  return db.transaction('rw', db.meta, async () => {
    const schema = await db.meta.get('schemaVersion');
    if (header !== undefined) {
      // Another tab may have made the store since it was probed: never write a second key over its rows.
      if (schema !== undefined || (await db.meta.get(AT_REST_KEY)) !== undefined)
        throw new KeyError('wrong-key', `store "${name}" was created meanwhile by another instance; open it again`);
      await db.meta.put({ key: AT_REST_KEY, value: header });
    }
    if (upgrade !== undefined) await upgradeHeader(db, upgrade);
    const stored = schema?.value;
    if (typeof stored === 'number' && stored > SCHEMA_VERSION) throw newerSchema(name, stored);
    if (stored !== SCHEMA_VERSION) await db.meta.put({ key: 'schemaVersion', value: SCHEMA_VERSION });
    const device = (await db.meta.get('deviceId'))?.value;
    if (typeof device === 'string') return device;
    const id = newId();
    await db.meta.put({ key: 'deviceId', value: id });
    return id;
  });
}

/**
 * Opens (or creates) the database `name` and returns it with this device's id;
 * with `encryption`, a store encrypted at rest (made so when it is new).
 */
export async function openStore(
  name: string,
  encryption?: AtRestEncryption,
): Promise<{ db: EngramDb; deviceId: string }> {
  const { sealing, header, upgrade } = await storeKeys(name, encryption);
  const db = new EngramDb(name, sealing);
  guardStoreKind(db, name);
  try {
    await db.open();
    await loadFreshness(db);
    const deviceId =
      (upgrade === undefined ? await knownDevice(db, name, header) : undefined) ??
      (await writeOpenRecords(db, name, { header, upgrade }));
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

/** The row sealing of store `storeId` under its data key; the key's bytes are wiped once the cipher holds them. */
export async function sealingOf(storeId: string, dataKey: Uint8Array): Promise<RowSealing> {
  try {
    return new RowSealing(await RowCipher.create(dataKey), storeId, bulkKeyOf(dataKey));
  } finally {
    dataKey.fill(0);
  }
}
