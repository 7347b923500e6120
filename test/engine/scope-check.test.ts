// The scope table of a restored snapshot against the store, over fake-indexeddb (cases in scope-check-cases.ts).
import { scopeCheckTests } from './scope-check-cases.js';

scopeCheckTests('Node');
