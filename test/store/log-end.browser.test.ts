// The change log's end read by key, over Chromium's IndexedDB (cases in log-end-cases.ts).
import { logEndTests } from './log-end-cases.js';

logEndTests('Chromium');
