// Scoped search from the index's memory (see scoped-search-cases.ts), over real IndexedDB with the WASM build of hnswlib in Chromium.
import { describe, it } from 'vitest';
import { exactIndexScopes, hnswIndexScopes } from './scoped-search-cases.js';

describe('scoped search from memory, in Chromium', () => {
  it(
    'searchMemories() in a scope of an exact index equals an exact scan of the scope, before and after deletes and updates, with no vector read',
    exactIndexScopes,
  );
  it(
    'searchMemories() in scopes of an HNSW index equals an exact scan of each scope, buffered, merged, after deletes, updates and a forgotten scope, with no vector read',
    hnswIndexScopes,
    120_000,
  );
});
