// Converting a store to encrypted and back over fake-indexeddb (cases in store-conversion-cases.ts).
import { storeConversionTests } from './store-conversion-cases.js';

storeConversionTests('Node');
