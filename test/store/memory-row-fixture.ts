// A stored memory row for the tests that write rows below the engine (head-with-rows.test.ts,
// sealed-search-reads-cases.ts): every field a row holds, the text and id the test's own.
import type { MemoryRow } from '../../lib/store/rows.js';

/** A live long-term memory of user `ana`, version 1, written by `device-a`. */
export function memoryRow(id: string, text: string): MemoryRow {
  return {
    id,
    text,
    tier: 'long_term',
    userId: 'ana',
    metadata: { n: 1 },
    hash: `h-${id}`,
    createdAt: 1,
    updatedAt: 1,
    accessCount: 0,
    version: 1,
    origin: 'device-a',
  };
}
