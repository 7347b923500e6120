// Encrypted exports over fake-indexeddb (cases in sealed-export-cases.ts).
import { sealedExportTests } from './sealed-export-cases.js';

sealedExportTests('Node');
