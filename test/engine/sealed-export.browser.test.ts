// Encrypted exports over Chromium's IndexedDB and WebCrypto (cases in sealed-export-cases.ts).
import { sealedExportTests } from './sealed-export-cases.js';

sealedExportTests('Chromium');
