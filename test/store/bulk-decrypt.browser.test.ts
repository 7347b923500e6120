import { bulkDecryptTests } from './bulk-decrypt-cases.js';

// Chromium: a worker opens them, the sealed bytes handed over to it.
bulkDecryptTests('Chromium', true);
