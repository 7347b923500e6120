// A search's reads of an encrypted store over fake-indexeddb (cases in sealed-search-reads-cases.ts).
import { sealedSearchReadTests } from './sealed-search-reads-cases.js';

sealedSearchReadTests('Node');
