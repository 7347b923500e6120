// The change log's end read by key, over fake-indexeddb (cases in log-end-cases.ts).
import { logEndTests } from './log-end-cases.js';

logEndTests('Node');
