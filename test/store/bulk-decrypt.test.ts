import { bulkDecryptTests } from './bulk-decrypt-cases.js';

// Node has no Worker: the bytes are opened on the calling thread.
bulkDecryptTests('Node', false);
