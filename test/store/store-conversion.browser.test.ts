// Converting a store to encrypted and back over Chromium's IndexedDB (cases in store-conversion-cases.ts).
import { storeConversionTests } from './store-conversion-cases.js';

storeConversionTests('Chromium');
