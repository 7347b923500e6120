import { describe, expect, it } from 'vitest';
import { peersSection } from '../../bench/report/peers-section.js';
import type { PeerFigures } from '../../bench/util/peer-table.js';

const figures = (system: string, values: Partial<PeerFigures>): PeerFigures => ({
  system,
  config: `${system} configured`,
  rounds: 2,
  queries: 200,
  ingestSeconds: 10,
  vectorP50: 2,
  vectorP95: 4,
  recall: 0.99,
  openMs: 500,
  memoryMiB: 100,
  heapMiB: 60,
  buffersMiB: 40,
  wasmMiB: 0,
  ...values,
});

describe('peersSection()', () => {
  it('prints the configurations, a table per size with ratios, and each row a peer wins with by how much and why', () => {
    const text = peersSection({
      rounds: 2,
      entityQueries: 20,
      sizes: [
        {
          n: 10_000,
          queries: 200,
          figures: [figures('engram', {}), figures('orama', { ingestSeconds: 2.5, vectorP50: 19 })],
        },
      ],
    }).join('\n');
    expect(text).toContain('- **orama**: orama configured');
    expect(text).toContain('| N = 10,000 | engram | orama |');
    expect(text).toContain('| vector top-10 p50, ms | 2.00 | 19.0 (9.50x) |');
    expect(text).toMatch(
      /N = 10,000, \*\*orama\*\*, insert N to a durable state, s: 2\.50 against engram's 10\.0, 4\.00x better\. Why: Orama inserts into in-memory structures/,
    );
    expect(text).toContain('EntityDB answers 20');
  });

  it('says so when no peer wins, and when the file has another shape', () => {
    expect(
      peersSection({
        sizes: [{ n: 10_000, queries: 5, figures: [figures('engram', {}), figures('orama', { ingestSeconds: 20 })] }],
      }).join('\n'),
    ).toContain('No peer beats engram on any row.');
    expect(peersSection({ results: [] })).toEqual(['_The result file has a shape this report does not know._']);
  });
});
