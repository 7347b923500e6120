import type { DBCore } from 'dexie';
import { describe, expect, it } from 'vitest';
import { FreshnessJournal, type MetaRowSealing, type ScannedRow } from '../../lib/store/freshness-journal.js';

/** A DBCore whose `meta` table holds nothing (no freshness head, no journal): the load falls back to the scan. */
function emptyCore(): DBCore {
  const meta = {
    schema: { primaryKey: { keyPath: 'key' } },
    get: () => Promise.resolve(undefined),
    query: () => Promise.resolve({ result: [] }),
  };
  return {
    schema: { tables: [{ name: 'meta' }] },
    transaction: () => ({}),
    table: () => meta,
  } as unknown as DBCore;
}

const rows: MetaRowSealing = { seal: () => ({}), open: () => undefined };

describe('FreshnessJournal.load', () => {
  it('load() takes every row at its stored version from the scan of a store larger than a call takes arguments, and reports the missing record', async () => {
    const journal = new FreshnessJournal();
    journal.attach(emptyCore(), rows);
    // 300,000 rows: a store of 60k-75k memories (a memory, its vector, terms and history rows).
    const scanned: ScannedRow[] = Array.from({ length: 300_000 }, (_, i) => ({
      table: 'memories',
      key: `m${i}`,
      v: i + 1,
    }));
    const damage = await journal.load(undefined, () => Promise.resolve(scanned));
    expect(damage).toMatch(/freshness record is missing/);
    expect(journal.ledger.loaded).toBe(true);
    expect(journal.ledger.head).toBe(300_000);
    expect(journal.ledger.check('memories', 'm299999', 300_000)).toBeUndefined();
    expect(journal.ledger.check('memories', 'm0', 1)).toBeUndefined();
    expect(journal.ledger.check('memories', 'm0', 2)).toMatch(/not the version/);
  });

  it('load() of a store whose rows carry no versions (made before them) reports nothing', async () => {
    const journal = new FreshnessJournal();
    journal.attach(emptyCore(), rows);
    const scanned: ScannedRow[] = [{ table: 'memories', key: 'a', v: undefined }];
    expect(await journal.load(undefined, () => Promise.resolve(scanned))).toBeUndefined();
    expect(journal.ledger.head).toBe(0);
    expect(journal.ledger.check('memories', 'a', undefined)).toBeUndefined();
  });
});
