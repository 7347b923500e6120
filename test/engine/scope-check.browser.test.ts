// The scope table of a restored snapshot against the store, over Chromium's IndexedDB (cases in scope-check-cases.ts).
import { scopeCheckTests } from './scope-check-cases.js';

scopeCheckTests('Chromium');
