// Changing the key of an encrypted store over Chromium's IndexedDB (cases in store-key-change-cases.ts).
import { storeKeyChangeTests } from './store-key-change-cases.js';

storeKeyChangeTests('Chromium');
