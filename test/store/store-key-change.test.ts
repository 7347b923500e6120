// Changing the key of an encrypted store over fake-indexeddb (cases in store-key-change-cases.ts).
import { storeKeyChangeTests } from './store-key-change-cases.js';

storeKeyChangeTests('Node');
