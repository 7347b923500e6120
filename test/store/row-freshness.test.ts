import { describe, expect, it } from 'vitest';
import { FreshnessLedger, PUT, DELETE } from '../../lib/store/row-freshness.js';
import { SortedKeys } from '../../lib/store/sorted-keys.js';

/** A loaded ledger holding `entries` as transaction 1..n (one entry each). */
function ledgerOf(...entries: [string, string][]): FreshnessLedger {
  const ledger = new FreshnessLedger();
  entries.forEach(([table, key], i) => {
    ledger.apply(i + 1, [[table, key, PUT]]);
  });
  ledger.loaded = true;
  return ledger;
}

describe('FreshnessLedger snapshot record', () => {
  it('round-trips every version, and applies writes and deletes made after the load over the saved keys', () => {
    const saved = ledgerOf(['memories', 'b'], ['memories', 'a'], ['vectors', 'a'], ['memories', 'c']).toRecord();
    const ledger = new FreshnessLedger();
    expect(ledger.fromRecord(saved)).toBe(true);
    ledger.loaded = true;
    expect(ledger.head).toBe(4);
    expect(ledger.check('memories', 'b', 1)).toBeUndefined();
    expect(ledger.check('memories', 'a', 2)).toBeUndefined();
    expect(ledger.check('vectors', 'a', 3)).toBeUndefined();
    expect(ledger.check('memories', 'a', 1)).toMatch(/not the version|older/);
    expect(ledger.check('memories', 'z', 2)).toMatch(/deleted or never written/);
    ledger.apply(5, [
      ['memories', 'a', PUT],
      ['memories', 'aa', PUT],
      ['memories', 'c', DELETE],
    ]);
    expect(ledger.check('memories', 'a', 2)).toMatch(/older version/);
    expect(ledger.check('memories', 'a', 5)).toBeUndefined();
    expect(ledger.check('memories', 'aa', 5)).toBeUndefined();
    expect(ledger.check('memories', 'c', 4)).toMatch(/deleted or never written/);
    // Saved again: the saved keys merged with the changes, in order, the deleted one gone.
    const again = new FreshnessLedger();
    expect(again.fromRecord(ledger.toRecord())).toBe(true);
    again.loaded = true;
    expect(again.check('memories', 'a', 5)).toBeUndefined();
    expect(again.check('memories', 'aa', 5)).toBeUndefined();
    expect(again.check('memories', 'b', 1)).toBeUndefined();
    expect(again.check('memories', 'c', 4)).toMatch(/deleted or never written/);
    const table = again.toRecord().tables['memories']!;
    const keys = SortedKeys.read(table.keys as Uint8Array, table.ends!)!;
    expect(Array.from({ length: keys.length }, (_, i) => keys.at(i))).toEqual(['a', 'aa', 'b']);
    expect([...table.versions]).toEqual([5, 5, 1]);
  });

  it('reads the older form (keys as a JSON string in any order) and refuses a malformed record', () => {
    const ledger = new FreshnessLedger();
    const older = { n: 3, tables: { memories: { keys: JSON.stringify(['b', 'a']), versions: Float64Array.of(3, 2) } } };
    expect(ledger.fromRecord(older)).toBe(true);
    ledger.loaded = true;
    expect(ledger.check('memories', 'b', 3)).toBeUndefined();
    expect(ledger.check('memories', 'a', 2)).toBeUndefined();
    expect(ledger.check('memories', 'a', 1)).toMatch(/older version/);
    const bytes = (keys: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(keys));
    for (const bad of [
      { n: 1, tables: { memories: { keys: bytes(['a', 'b']), versions: Float64Array.of(1) } } },
      { n: 1, tables: { memories: { keys: bytes([1]), versions: Float64Array.of(1) } } },
      { n: 1, tables: { memories: { keys: new TextEncoder().encode('[not json'), versions: Float64Array.of(1) } } },
      { n: 'x', tables: {} },
    ])
      expect(new FreshnessLedger().fromRecord(bad)).toBe(false);
  });
  it('keeps keys UTF-8 cannot hold (a lone surrogate) in the older form, and every other key as bytes', () => {
    const lone = 'block\uD800x';
    const ledger = ledgerOf(['blocks', lone], ['blocks', 'plain'], ['memories', 'é🙂'], ['memories', 'a']);
    const record = ledger.toRecord();
    expect(record.tables['blocks']!.ends).toBeUndefined();
    expect(record.tables['memories']!.ends).toBeInstanceOf(Uint32Array);
    const again = new FreshnessLedger();
    expect(again.fromRecord(record)).toBe(true);
    again.loaded = true;
    expect(again.check('blocks', lone, 1)).toBeUndefined();
    expect(again.check('blocks', 'plain', 2)).toBeUndefined();
    expect(again.check('memories', 'é🙂', 3)).toBeUndefined();
    expect(again.check('memories', 'a', 4)).toBeUndefined();
    expect(again.check('memories', 'é', 3)).toMatch(/deleted or never written/);
  });

  it('reads the older sorted form (keys as JSON bytes) and refuses keys as bytes whose ends do not fit them', () => {
    const older = {
      n: 2,
      tables: {
        memories: { keys: new TextEncoder().encode(JSON.stringify(['a', 'b'])), versions: Float64Array.of(1, 2) },
      },
    };
    const ledger = new FreshnessLedger();
    expect(ledger.fromRecord(older)).toBe(true);
    ledger.loaded = true;
    expect(ledger.check('memories', 'b', 2)).toBeUndefined();
    expect(ledger.check('memories', 'a', 2)).toMatch(/not the version/);
    const ab = new TextEncoder().encode('ab');
    for (const [keys, ends, versions] of [
      [ab, Uint32Array.of(1, 3), Float64Array.of(1, 1)], // past the bytes
      [ab, Uint32Array.of(1), Float64Array.of(1)], // bytes left over
      [new TextEncoder().encode('ba'), Uint32Array.of(1, 2), Float64Array.of(1, 1)], // out of order
      [new TextEncoder().encode('aa'), Uint32Array.of(1, 2), Float64Array.of(1, 1)], // twice
      [ab, Uint32Array.of(1, 2), Float64Array.of(1)], // a version short
      ['ab', Uint32Array.of(1, 2), Float64Array.of(1, 1)], // not bytes
    ] as const)
      expect(new FreshnessLedger().fromRecord({ n: 1, tables: { memories: { keys, ends, versions } } })).toBe(false);
  });
});
