// A search's reads of an encrypted store over Chromium's IndexedDB (cases in sealed-search-reads-cases.ts).
import { sealedSearchReadTests } from './sealed-search-reads-cases.js';

sealedSearchReadTests('Chromium');
